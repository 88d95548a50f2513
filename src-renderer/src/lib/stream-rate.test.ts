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
    // The rate is there, but its rows came within 20 ms: not yet a stream.
    expect(s.fast(30)).toBe(false);
    s.add(1, 550);
    expect(s.fast(560)).toBe(true);
    // Between the two thresholds it stays what it was.
    s.add(SLOW_ROWS_PER_SEC, 1_600);
    expect(s.perSecond(1_600)).toBe(SLOW_ROWS_PER_SEC);
    expect(s.fast(1_600)).toBe(true);
    // The stream stops: a second later it is slow.
    expect(s.fast(2_700)).toBe(false);
    s.add(SLOW_ROWS_PER_SEC + 1, 2_800);
    expect(s.fast(2_800)).toBe(false);
  });

  it('reset forgets the rows and the state', () => {
    const s = new StreamRate();
    s.add(2_500, 0);
    s.add(2_500, 600);
    expect(s.fast(600)).toBe(true);
    s.reset();
    expect(s.perSecond(602)).toBe(0);
    expect(s.fast(602)).toBe(false);
  });

  it('a burst is not a stream: a round of records at once every second never turns it fast', () => {
    const s = new StreamRate();
    for (let t = 0; t < 10_000; t += 1_000) {
      s.add(FAST_ROWS_PER_SEC * 2, t);
      for (let dt = 0; dt < 1_000; dt += 16) expect(s.fast(t + dt)).toBe(false);
    }
  });
});
