// When the passive tap's reader runs: held by default, let go once loopback carried bytes and went
// quiet, held again once it has read them or at a burst, and never held past its bounds (then it
// reads for a while before it may be held again).
import { describe, expect, it } from 'vitest';
import { CapturePacer } from './capture-pacer';

function pacer(o: { maxHeldMs?: number; maxHeldBytes?: number; idleUnknown?: boolean } = {}) {
  let counter = 0;
  let t = 0;
  let idle = false;
  const events: string[] = [];
  const p = new CapturePacer({
    readCounter: () => counter,
    hold: () => events.push(`hold@${t}`),
    release: () => events.push(`release@${t}`),
    now: () => t,
    readerIdle: () => (o.idleUnknown ? null : idle),
    ...o,
  });
  /** One poll per ms, `bytes` moved before each; `readerIdle`: the reader sleeps waiting for packets. */
  const run = (ms: number, bytes: number, readerIdle = false) => {
    for (let i = 0; i < ms; i++) {
      t++;
      counter += bytes;
      idle = readerIdle;
      p.tick();
    }
  };
  return { p, events, run };
}

describe('capture pacer', () => {
  it('holds the reader from the start and lets it go only once bytes came and stopped for 2 ms', () => {
    const { p, events, run } = pacer();
    run(5, 0);
    expect(events).toEqual(['hold@0']);
    run(4, 2 * 1024 * 1024); // an 8 MiB record: the reader is already held
    run(1, 0);
    expect(events).toEqual(['hold@0']);
    run(1, 0);
    expect(events).toEqual(['hold@0', 'release@11']);
    expect(p.holding).toBe(false);
  });

  it('holds the reader again once it has slept waiting for packets 2 ms (its ring read), not before', () => {
    const { p, events, run } = pacer();
    run(1, 300); // a small control message
    run(2, 0);
    expect(events).toEqual(['hold@0', 'release@3']);
    run(20, 0); // let go but not yet idle (not scheduled, or writing): it is not held
    expect(events).toEqual(['hold@0', 'release@3']);
    run(2, 0, true); // asleep a moment: it may be about to be woken
    expect(events).toEqual(['hold@0', 'release@3']);
    run(1, 0, true);
    expect(events).toEqual(['hold@0', 'release@3', 'hold@26']);
    expect(p.releases).toBe(1);
  });

  it('bytes that came in the poll it was held in wait for the next release', () => {
    const { events, run } = pacer();
    run(1, 300);
    run(2, 0);
    run(2, 0, true);
    run(1, 300, true);
    run(2, 0);
    expect(events).toEqual(['hold@0', 'release@3', 'hold@6', 'release@8']);
  });

  it('where the reader sleep cannot be seen, it is held only at bursts', () => {
    const { events, run } = pacer({ idleUnknown: true });
    run(1, 300);
    run(2, 0);
    run(50, 0);
    run(1, 1024 * 1024);
    expect(events).toEqual(['hold@0', 'release@3', 'hold@54']);
  });

  it('holds a reading reader at once when a burst starts', () => {
    const { events, run } = pacer();
    run(1, 300);
    run(2, 0);
    run(1, 1024 * 1024, true);
    expect(events).toEqual(['hold@0', 'release@3', 'hold@4']);
  });

  it('lets go at its time bound under traffic that never pauses, then reads before holding again', () => {
    const { p, events, run } = pacer({ maxHeldMs: 10 });
    run(100, 1024 * 1024);
    expect(events.slice(0, 4)).toEqual(['hold@0', 'release@11', 'hold@61', 'release@71']);
    expect(p.forcedReleases).toBe(2);
  });

  it('lets go at its byte bound (the ring must not fill)', () => {
    const { events, run } = pacer({ maxHeldBytes: 4 * 1024 * 1024 });
    run(10, 1024 * 1024);
    expect(events.slice(0, 2)).toEqual(['hold@0', 'release@4']);
  });

  it('stop lets a held reader go for good', () => {
    const { p, events, run } = pacer();
    p.stop();
    run(5, 1024 * 1024);
    expect(events).toEqual(['hold@0', 'release@0']);
  });
});
