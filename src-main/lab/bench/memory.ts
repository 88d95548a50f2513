// Peak memory of the engine and every rank: the resident set of this process
// and all its descendants, sampled from /proc (Linux), plus each process's
// own high-water mark (VmHWM) at its last sample. Elsewhere it reports null.
import { readdirSync, readFileSync } from 'node:fs';

interface ProcMem {
  rss: number;
  hwm: number;
}

function status(pid: number): (ProcMem & { ppid: number }) | null {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
    const ppid = Number(/^PPid:\s+(\d+)/m.exec(text)?.[1] ?? -1);
    return { rss: kb('VmRSS'), hwm: kb('VmHWM'), ppid };
  } catch {
    return null; // gone between the listing and the read
  }
}

/** This process and its descendants, each with its resident and peak bytes. */
export function processTree(root = process.pid): Map<number, ProcMem> {
  const all = new Map<number, ProcMem & { ppid: number }>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const s = status(Number(d));
    if (s) all.set(Number(d), s);
  }
  const out = new Map<number, ProcMem>();
  const visit = (pid: number) => {
    const s = all.get(pid);
    if (!s) return;
    out.set(pid, { rss: s.rss, hwm: s.hwm });
    for (const [c, cs] of all) if (cs.ppid === pid && !out.has(c)) visit(c);
  };
  visit(root);
  return out;
}

export interface MemoryPeak {
  /** Largest sampled sum of resident bytes (engine + ranks). */
  peakTreeRssBytes: number;
  /** The engine process's own high-water mark. */
  engineHwmBytes: number;
  /** Sum over rank processes of each one's high-water mark (an upper bound of their joint peak). */
  ranksHwmBytes: number;
  processes: number;
  samples: number;
}

/** Samples the process tree every `everyMs` until stop() (which returns the peaks), or null off Linux. */
export function sampleTreeMemory(everyMs = 100): { stop: () => MemoryPeak | null } {
  if (process.platform !== 'linux') return { stop: () => null };
  let peak = 0;
  let samples = 0;
  const hwm = new Map<number, number>();
  const sample = () => {
    const tree = processTree();
    let sum = 0;
    for (const [pid, m] of tree) {
      sum += m.rss;
      hwm.set(pid, Math.max(hwm.get(pid) ?? 0, m.hwm));
    }
    peak = Math.max(peak, sum);
    samples++;
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      const engineHwmBytes = hwm.get(process.pid) ?? 0;
      let ranksHwmBytes = 0;
      for (const [pid, v] of hwm) if (pid !== process.pid) ranksHwmBytes += v;
      return { peakTreeRssBytes: peak, engineHwmBytes, ranksHwmBytes, processes: hwm.size, samples };
    },
  };
}
