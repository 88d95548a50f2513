import { describe, expect, it } from 'vitest';
import { monoWidth, placeLabels } from './label-lanes';

describe('labels along a time axis', () => {
  it('never overlap: a close label goes to the next row, and past the rows it is left out', () => {
    // Four kill/fault marks 5 px apart with labels 60 px wide (the replay picture overprinted them).
    const xs = [100, 105, 110, 300];
    const w = [60, 60, 60, 60];
    expect(placeLabels(xs, w, 2)).toEqual([
      { index: 0, row: 0 },
      { index: 1, row: 1 },
      { index: 3, row: 0 },
    ]);
    // Round numbers centred on their ticks, one row: every other one when they crowd.
    const rounds = [10, 14, 18, 22, 26].map((x) => x * 2);
    const placed = placeLabels(
      rounds,
      rounds.map(() => monoWidth('12', 8)),
      1,
      'middle',
    );
    expect(placed.map((p) => p.index)).toEqual([0, 2, 4]);
    // Whatever is placed, no two labels of a row overlap.
    for (const row of [0, 1]) {
      const spans = placeLabels(xs, w, 2)
        .filter((p) => p.row === row)
        .map((p) => [xs[p.index], xs[p.index] + w[p.index]]);
      for (let i = 1; i < spans.length; i++) expect(spans[i][0]).toBeGreaterThanOrEqual(spans[i - 1][1]);
    }
  });
});
