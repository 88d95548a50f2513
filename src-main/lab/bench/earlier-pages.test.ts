// The earlier-pages bench runs its whole path on tiny sessions (its figures are measured by
// `relay-lab bench --only pages`, never asserted).
import { describe, expect, it } from 'vitest';
import { benchEarlierPages } from './earlier-pages';

describe('earlier pages bench', () => {
  it('pages two small recordings back to their first unit, from heads and from whole lines', async () => {
    const r = await benchEarlierPages({ units: [300, 700], pageUnits: 100, capturedBytes: 8 * 1024 });
    expect(r.sessions.map((s) => [s.units, s.pages])).toEqual([
      [300, 3],
      [700, 7],
    ]);
    for (const s of r.sessions) {
      for (const v of [s.pageMsMedian, s.firstPageMs, s.wholeLinesPageMsMedian, s.unitBytesMsMedian])
        expect(Number.isFinite(v) && v >= 0).toBe(true);
      // A page of heads reads less than the page's lines whole (a quarter of them hold 8 KiB).
      expect(s.pageKiBMedian).toBeLessThan(s.wholeLinesPageMiB * 1024);
    }
    expect(Number.isFinite(r.firstPageLargeOverSmall)).toBe(true);
  });
});
