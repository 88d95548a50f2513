// Peak memory of a sweep case: the engine's own process over the case (its
// lifetime peak would mix cases), and the ranks' peak resident set as the
// kernel keeps it (VmHWM in /proc/<pid>/status, Linux).
import fs from 'node:fs';

/** Sampling interval where the kernel cannot reset this process's peak (not Linux, or not allowed). */
const SAMPLE_MS = 20;

/** VmHWM of a process in bytes, or null (gone, not Linux). */
function peakRssOf(pid: number | 'self'): number | null {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    // the process already left, or /proc is not there
    return null;
  }
}

/**
 * The engine's peak over one case. On Linux the kernel's own peak (VmHWM) is
 * reset at the start ("5" to /proc/self/clear_refs) and read at the end: exact,
 * and nothing runs while the case does. A 20 ms sampler of the resident set
 * cost the engine about half a millisecond of each 25 ms shaped round.
 */
export class MemoryWatch {
  private sampled = 0;
  private kernelPeak = false;
  private timer: NodeJS.Timeout | null = null;

  start(): void {
    this.sampled = process.memoryUsage.rss();
    try {
      fs.writeFileSync('/proc/self/clear_refs', '5');
      this.kernelPeak = peakRssOf('self') !== null;
    } catch {
      this.kernelPeak = false;
    }
    if (this.kernelPeak) return;
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
    this.timer.unref?.();
  }

  stop(): void {
    this.sample();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** The peak so far, in bytes. */
  get peak(): number {
    return Math.max(this.sampled, (this.kernelPeak && peakRssOf('self')) || 0);
  }

  private sample(): void {
    this.sampled = Math.max(this.sampled, process.memoryUsage.rss());
  }

  /** The largest VmHWM of the processes, in bytes; null when no process says (not Linux, or gone). */
  static peakOfProcesses(pids: (number | undefined)[]): number | null {
    let peak: number | null = null;
    for (const pid of pids) {
      const p = pid ? peakRssOf(pid) : null;
      if (p !== null) peak = Math.max(peak ?? 0, p);
    }
    return peak;
  }
}
