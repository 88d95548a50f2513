import { describe, expect, it, vi } from 'vitest';
import { DecodeGate } from './decode-gate';

describe('DecodeGate', () => {
  it('holds a burst until the bytes stop, then releases it whole and in order', () => {
    vi.useFakeTimers();
    try {
      let clock = 0;
      const out: number[] = [];
      const gate = new DecodeGate<number>((x) => out.push(x), { quietMs: 30, now: () => clock });
      for (let i = 0; i < 5; i++) {
        gate.hold(i, 100);
        clock += 20;
        vi.advanceTimersByTime(20);
      }
      // Chunks 20 ms apart under a 30 ms quiet: still one burst.
      expect(out).toEqual([]);
      clock += 30;
      vi.advanceTimersByTime(30);
      expect(out).toEqual([0, 1, 2, 3, 4]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('releases at once past its byte bound, and on flush (a message that must follow the chunks)', () => {
    const out: number[] = [];
    const gate = new DecodeGate<number>((x) => out.push(x), { quietMs: 1000, maxHeldBytes: 250 });
    gate.hold(1, 100);
    gate.hold(2, 100);
    expect(out).toEqual([]);
    gate.hold(3, 100);
    expect(out).toEqual([1, 2, 3]);
    gate.hold(4, 10);
    gate.flush();
    expect(out).toEqual([1, 2, 3, 4]);
  });

  it('with quietMs 0 holds nothing', () => {
    const out: number[] = [];
    const gate = new DecodeGate<number>((x) => out.push(x), { quietMs: 0 });
    gate.hold(7, 1);
    expect(out).toEqual([7]);
  });
});
