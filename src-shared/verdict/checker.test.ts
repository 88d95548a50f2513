// The standalone rank's sampled check against flodl's bf16 arithmetic: three
// RNE roundings (relay re-encode, controller sum, scale) can move a consensus
// element past 2/256 of the exact mean; the bound derived from them must not.
import { describe, expect, it } from 'vitest';
import { foldTolerance } from '../fold/tolerance';
import { DTYPE_BF16, DTYPE_F32 } from '../wire/constants';
import { rankMass } from '../synthetic';
import { checkAdoption, elementOf, expectedConsensus } from './index';

// Issue 31's case: seed 1, round 0, two hosts of two ranks, element 248960.
const INDEX = 248960;
const groups = [
  [{ rank: 0 }, { rank: 1 }],
  [{ rank: 2 }, { rank: 3 }],
];

describe('checkAdoption with flodl bf16 arithmetic', () => {
  const layout = { shapes: [[INDEX + 1]], numel: INDEX + 1 };
  const expected = expectedConsensus({ seed: 1, round: 0, dtype: DTYPE_BF16, layout, groups });
  const adoptedValue = elementOf(expected.frame, INDEX);

  it('reproduces the measured element (host sums 4.5625 and 3.59375, total 8.125)', () => {
    expect(adoptedValue).toBe(0.67578125);
    const weight = [0, 1, 2, 3].reduce((a, r) => a + rankMass(1, r, 0), 0);
    expect(Math.fround(8.125 * Math.fround(1 / weight))).toBeCloseTo(adoptedValue, 2);
  });

  it('accepts flodl consensus whose error exceeds 2/256', () => {
    const r = checkAdoption({
      seed: 1,
      round: 0,
      dtype: DTYPE_BF16,
      accepted: groups.flat(),
      adopted: { weight: expected.weight, indices: [INDEX], values: [adoptedValue] },
    });
    expect(r.maxRelError).toBeGreaterThan(2 / 256);
    expect(r.verdict).toBe('ok');
  });

  it('accepts every element of a 2x2 bf16 round, and still rejects a value one bf16 step further off', () => {
    const small = { shapes: [[4096]], numel: 4096 };
    for (let round = 0; round < 4; round++) {
      const e = expectedConsensus({ seed: 1, round, dtype: DTYPE_BF16, layout: small, groups });
      const indices = Array.from({ length: 4096 }, (_, i) => i);
      const values = indices.map((i) => elementOf(e.frame, i));
      const input = { seed: 1, round, dtype: DTYPE_BF16, accepted: groups.flat() };
      expect(checkAdoption({ ...input, adopted: { weight: e.weight, indices, values } }).verdict).toBe('ok');
    }
    const wrong = adoptedValue * (1 + 6 / 256);
    const r = checkAdoption({
      seed: 1,
      round: 0,
      dtype: DTYPE_BF16,
      accepted: groups.flat(),
      adopted: { weight: expected.weight, indices: [INDEX], values: [wrong] },
    });
    expect(r.verdict).toBe('mismatch');
  });

  it('keeps f32 at 1e-6 and bounds bf16 by three roundings', () => {
    expect(foldTolerance(DTYPE_F32)).toBe(1e-6);
    expect(foldTolerance(DTYPE_BF16)).toBeGreaterThan(3 / 256);
    expect(foldTolerance(DTYPE_BF16)).toBeLessThan(3.1 / 256);
  });
});
