// A case's engine peak covers memory touched during the case (on Linux the
// kernel's own peak, reset when the case starts), and the ranks' peaks are read
// from /proc.
import { describe, expect, it } from 'vitest';
import { MemoryWatch } from './memory';

describe('MemoryWatch', () => {
  it('sees memory touched between start and stop', () => {
    const w = new MemoryWatch();
    w.start();
    const before = process.memoryUsage.rss();
    const big = Buffer.alloc(96 * 1024 * 1024, 1); // every page touched
    expect(big[big.length - 1]).toBe(1);
    w.stop();
    expect(w.peak).toBeGreaterThanOrEqual(before + 80 * 1024 * 1024);
  });

  it('reads the peaks of other processes, and null for none', () => {
    expect(MemoryWatch.peakOfProcesses([process.pid])).toBeGreaterThan(0);
    expect(MemoryWatch.peakOfProcesses([undefined, 2 ** 22 + 12345])).toBeNull();
  });
});
