// The one tolerance rule of WIRE.md 7.3 (relative 1e-6 for f32; for bf16 the
// bound of flodl's three roundings, below), for comparing folds whose summation order differs (two topologies
// folding the same contributions, or a standalone rank that cannot know its
// cluster's fold order). The lab's round verdicts do not use it: they
// recompute flodl's arithmetic and require it bit for bit (../verdict/).
import { DTYPE_BF16 } from '../wire/constants';

/** bf16's unit roundoff: 8 significand bits, round to nearest even. */
const BF16_U = 2 ** -8;

/**
 * flodl's bf16 consensus rounds three times (WIRE.md 4.4, 4.5): the relay
 * re-encodes its host's f32 sum (RNE #1), the controller re-encodes the sum
 * of the HostFrames (RNE #2) and the scaled result (RNE #3). Each rounding
 * moves a value by at most u of itself, so relative to the terms' magnitude
 * the consensus is off by at most (1 + u)^3 - 1 = 3u + 3u^2 + u^3. The f32
 * sums and fround(1 / W) add about 2^-24 per term; 2^-16 covers 256 terms.
 * (The earlier 2/256 was too tight: flodl's own relay measured 0.0081-0.0092.)
 */
export const BF16_FOLD_TOLERANCE = (1 + BF16_U) ** 3 - 1 + 2 ** -16;

/** Relative tolerance of a dtype (WIRE.md 7.3). */
export function foldTolerance(dtype: number): number {
  return dtype === DTYPE_BF16 ? BF16_FOLD_TOLERANCE : 1e-6;
}

/**
 * Index of the first element outside |a - b| <= tol * max(|a|, |b|) + absTol
 * (-1: none; a length mismatch is index 0). NaN matches NaN; infinities must
 * be identical.
 */
export function firstMismatch(a: ArrayLike<number>, b: ArrayLike<number>, dtype: number, absTol = 0): number {
  if (a.length !== b.length) return 0;
  const tol = foldTolerance(dtype);
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (Number.isNaN(x) || Number.isNaN(y)) {
      if (Number.isNaN(x) && Number.isNaN(y)) continue;
      return i;
    }
    if (!Number.isFinite(x) || !Number.isFinite(y)) {
      if (x === y) continue;
      return i;
    }
    if (Math.abs(x - y) > tol * Math.max(Math.abs(x), Math.abs(y)) + absTol) return i;
  }
  return -1;
}

export function roundsAlmostEqual(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  dtype: number,
  absTol = 0,
): boolean {
  return firstMismatch(a, b, dtype, absTol) === -1;
}
