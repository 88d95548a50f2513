// The records list's windowing: the rows drawn always belong to a position
// the list can have, so a list that shrank (a filter, Back to live) shows
// its rows instead of a blank band.
import { describe, expect, it } from 'vitest';
import { centerTop, clampTop, fillWindow, maxScrollTop, revealTop, rowSlots, rowWindow } from './row-window';

const H = 22;

describe('row window', () => {
  it('draws the rows of the viewport plus overscan', () => {
    expect(rowWindow(0, 1000, H, 440, 5)).toEqual({ first: 0, end: 25, top: 0 });
    expect(rowWindow(2200, 1000, H, 440, 5)).toEqual({ first: 95, end: 125, top: 2200 });
  });

  it('a position left over from a longer list is clamped: the rows drawn are the last ones, never none', () => {
    // The issue: "showing 2", the view parked 110,000 px down.
    const w = rowWindow(110_000, 2, H, 440, 5);
    expect(w.top).toBe(0);
    expect([w.first, w.end]).toEqual([0, 2]);
    const long = rowWindow(110_000, 100, H, 440, 5);
    expect(long.top).toBe(maxScrollTop(100, H, 440));
    expect(long.end).toBe(100);
    expect(long.first).toBeLessThan(100 - 440 / H);
  });

  it('an empty list draws nothing and sits at the top', () => {
    expect(rowWindow(500, 0, H, 440, 5)).toEqual({ first: 0, end: 0, top: 0 });
  });

  it('centres a row, and reveals one with the least movement', () => {
    expect(centerTop(500, 1000, H, 440)).toBe(500 * H - (440 - H) / 2);
    expect(centerTop(0, 1000, H, 440)).toBe(0);
    expect(centerTop(999, 1000, H, 440)).toBe(maxScrollTop(1000, H, 440));
    // Visible already: no move. Above: to its top. Below: its bottom at the viewport's bottom.
    expect(revealTop(10, 0, 1000, H, 440)).toBe(0);
    expect(revealTop(5, 400, 1000, H, 440)).toBe(110);
    expect(revealTop(30, 0, 1000, H, 440)).toBe(31 * H - 440);
    expect(clampTop(-5, 10, H, 440)).toBe(0);
  });

  it('never returns more rows than its slots, and fills to exactly that many', () => {
    const slots = rowSlots(440, H, 2);
    for (const top of [0, 11, 2200, 2211, 21_560, 30_000]) {
      const w = rowWindow(top, 1000, H, 440, 2);
      expect(w.end - w.first).toBeLessThanOrEqual(slots);
      const f = fillWindow(w, 1000, slots);
      expect(f.end - f.first).toBe(slots);
      // The rows in sight stay drawn.
      expect(f.first).toBeLessThanOrEqual(w.first);
      expect(f.end).toBeGreaterThanOrEqual(w.end);
      expect(f.top).toBe(w.top);
    }
    // A list shorter than the slots: every row.
    expect(fillWindow(rowWindow(0, 7, H, 440, 2), 7, slots)).toEqual({ first: 0, end: 7, top: 0 });
    expect(fillWindow(rowWindow(0, 0, H, 440, 2), 0, slots)).toEqual({ first: 0, end: 0, top: 0 });
  });
});
