// The shared readout clock: every listener of a period runs in the same tick,
// and the timer stops when the last one leaves. Fake timers, no waiting.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { onReadout } from './readout-clock';

describe('readout clock', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('runs every listener of a period in one tick, and stops with the last listener', () => {
    const calls: string[] = [];
    const offA = onReadout(500, () => calls.push(`a@${Date.now()}`));
    vi.advanceTimersByTime(200);
    // Joining later does not start a timer of its own: it ticks with the first.
    const offB = onReadout(500, () => calls.push(`b@${Date.now()}`));
    vi.advanceTimersByTime(300);
    expect(calls).toEqual([`a@${Date.now()}`, `b@${Date.now()}`]);
    offA();
    offB();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(1000);
    expect(calls).toHaveLength(2);
  });
});
