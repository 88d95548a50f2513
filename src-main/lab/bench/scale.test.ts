// The scale section's line fit (pure arithmetic; no timing measured here).
import { describe, expect, it } from 'vitest';
import { fitLine } from './scale';

describe('fitLine', () => {
  it('recovers an exact line and finds no step', () => {
    const f = fitLine([1, 2, 4, 8, 16].map((x) => ({ x, y: 3 + 2 * x })));
    expect(f.slope).toBeCloseTo(2, 12);
    expect(f.interceptMs).toBeCloseTo(3, 12);
    expect(f.r2).toBeCloseTo(1, 12);
    expect(f.steps).toEqual([]);
  });

  it('names a point well above the line as a step', () => {
    const pts = [1, 2, 3, 4, 5, 6, 7, 8].map((x) => ({ x, y: 10 * x }));
    pts[7].y = 300;
    const f = fitLine(pts);
    expect(f.steps.map((s) => s.x)).toEqual([8]);
  });

  it('needs two points; non-finite points are left out', () => {
    expect(Number.isNaN(fitLine([{ x: 1, y: 1 }]).slope)).toBe(true);
    expect(
      fitLine([
        { x: 1, y: 1 },
        { x: 2, y: 2 },
        { x: NaN, y: 5 },
      ]).slope,
    ).toBeCloseTo(1, 12);
  });
});
