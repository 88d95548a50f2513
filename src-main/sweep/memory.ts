// Peak memory of a sweep case: the engine's own process sampled while the
// case runs (its lifetime peak would mix cases), and the ranks' peak resident
// set as the kernel keeps it (VmHWM in /proc/<pid>/status, Linux).
import fs from 'node:fs';

const SAMPLE_MS = 20;

export class MemoryWatch {
  peak = 0;
  private timer: NodeJS.Timeout | null = null;

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
    this.timer.unref?.();
  }

  stop(): void {
    this.sample();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private sample(): void {
    this.peak = Math.max(this.peak, process.memoryUsage.rss());
  }

  /** The largest VmHWM of the processes, in bytes; null when no process says (not Linux, or gone). */
  static peakOfProcesses(pids: (number | undefined)[]): number | null {
    let peak: number | null = null;
    for (const pid of pids) {
      if (!pid) continue;
      try {
        const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
        if (m) peak = Math.max(peak ?? 0, Number(m[1]) * 1024);
      } catch {
        // the process already left, or /proc is not there
      }
    }
    return peak;
  }
}
