// When the passive tap's reader runs: held while loopback is busy, let go after the quiet,
// and never held past its bounds (then it reads for a while before it may be held again).
import { describe, expect, it } from 'vitest';
import { CapturePacer } from './capture-pacer';

function pacer(o: { maxHeldMs?: number; maxHeldBytes?: number } = {}) {
  let counter = 0;
  let t = 0;
  const events: string[] = [];
  const p = new CapturePacer({
    readCounter: () => counter,
    hold: () => events.push(`hold@${t}`),
    release: () => events.push(`release@${t}`),
    now: () => t,
    ...o,
  });
  /** One poll per ms, `bytes` moved before each. */
  const run = (ms: number, bytes: number) => {
    for (let i = 0; i < ms; i++) {
      t++;
      counter += bytes;
      p.tick();
    }
  };
  return { p, events, run };
}

describe('capture pacer', () => {
  it('holds the reader at the first busy poll and lets it go 2 ms after the bytes stop', () => {
    const { p, events, run } = pacer();
    run(5, 100); // small control traffic: not busy
    expect(events).toEqual([]);
    run(4, 2 * 1024 * 1024); // an 8 MiB record
    run(5, 0);
    expect(events).toEqual(['hold@6', 'release@11']);
    expect(p.holding).toBe(false);
    expect(p.holds).toBe(1);
  });

  it('lets go at its time bound under traffic that never pauses, then reads before holding again', () => {
    const { p, events, run } = pacer({ maxHeldMs: 10 });
    run(100, 1024 * 1024);
    expect(events.slice(0, 4)).toEqual(['hold@1', 'release@11', 'hold@61', 'release@71']);
    expect(p.forcedReleases).toBe(2);
  });

  it('lets go at its byte bound (the ring must not fill)', () => {
    const { events, run } = pacer({ maxHeldBytes: 4 * 1024 * 1024 });
    run(10, 1024 * 1024);
    expect(events.slice(0, 2)).toEqual(['hold@1', 'release@4']);
  });

  it('stop lets a held reader go', () => {
    const { p, events, run } = pacer();
    run(1, 1024 * 1024);
    p.stop();
    expect(events).toEqual(['hold@1', 'release@1']);
  });
});
