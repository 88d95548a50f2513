// Lowers the calling thread's scheduling priority (Linux: nice is per thread,
// and setpriority on a thread id touches that thread alone). The tap's decode
// worker runs under it, so on a machine with fewer cores than busy threads
// the decoding waits for the forwarding, never the other way round.
import fs from 'node:fs';
import os from 'node:os';

/** Raises this thread's nice value by `by` (at most 19); returns why not where it cannot (not Linux, no /proc). */
export function niceThisThread(by: number): string | null {
  if (process.platform !== 'linux') return `thread priorities are set on Linux only (${process.platform})`;
  try {
    const tid = Number(pathTail(fs.readlinkSync('/proc/thread-self')));
    if (!Number.isInteger(tid) || tid <= 0) return 'no thread id in /proc/thread-self';
    os.setPriority(tid, Math.min(19, os.getPriority(tid) + by));
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

const pathTail = (p: string) => p.slice(p.lastIndexOf('/') + 1);
