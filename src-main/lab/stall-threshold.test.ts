import { describe, expect, it } from 'vitest';
import { STALL_FACTOR, STALL_HISTORY, stallThresholdMs } from './stall-threshold';

describe('stall threshold', () => {
  it('is the floor before any round has completed, and while rounds are quick', () => {
    expect(stallThresholdMs(1500, [])).toBe(1500);
    expect(stallThresholdMs(1500, [80, 120, 95])).toBe(1500);
  });

  it('follows rounds that simply take long, so a slow model is not stalled every round', () => {
    const rounds = [1450, 1600, 1520, 1480];
    const t = stallThresholdMs(1000, rounds);
    expect(t).toBe(STALL_FACTOR * 1500);
    // None of these rounds would have been reported against it.
    expect(rounds.every((d) => d < t)).toBe(true);
  });

  it('one stalled round does not raise the bar for the next stall (median of the recent rounds)', () => {
    expect(stallThresholdMs(1000, [500, 500, 500, 30_000, 500])).toBe(STALL_FACTOR * 500);
  });

  it('looks at the recent rounds only', () => {
    const old = new Array<number>(20).fill(5000);
    const recent = new Array<number>(STALL_HISTORY).fill(400);
    expect(stallThresholdMs(1000, [...old, ...recent])).toBe(STALL_FACTOR * 400);
  });
});
