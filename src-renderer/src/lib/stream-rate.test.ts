import { describe, expect, it } from 'vitest';
import { FAST_ROWS_PER_SEC, SLOW_ROWS_PER_SEC, StreamRate } from './stream-rate';

describe('StreamRate', () => {
  it('counts the rows of the last second only', () => {
    const s = new StreamRate();
    s.add(500, 0);
    s.add(700, 600);
    expect(s.perSecond(900)).toBe(1_200);
    expect(s.perSecond(1_000)).toBe(700);
    expect(s.perSecond(1_600)).toBe(0);
  });

  it('turns fast at the high threshold and slow only below the low one', () => {
    const s = new StreamRate();
    s.add(FAST_ROWS_PER_SEC - 1, 0);
    expect(s.fast(10)).toBe(false);
    s.add(1, 20);
    expect(s.fast(30)).toBe(true);
    // Between the two thresholds it stays what it was.
    s.add(SLOW_ROWS_PER_SEC, 1_500);
    expect(s.perSecond(1_500)).toBe(SLOW_ROWS_PER_SEC);
    expect(s.fast(1_500)).toBe(true);
    // The stream stops: a second later it is slow.
    expect(s.fast(2_600)).toBe(false);
    s.add(SLOW_ROWS_PER_SEC + 1, 2_700);
    expect(s.fast(2_700)).toBe(false);
  });

  it('reset forgets the rows and the state', () => {
    const s = new StreamRate();
    s.add(5_000, 0);
    expect(s.fast(1)).toBe(true);
    s.reset();
    expect(s.perSecond(2)).toBe(0);
    expect(s.fast(2)).toBe(false);
  });
});
