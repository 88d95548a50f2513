// The one tolerance rule of WIRE.md 7.3 (relative 1e-6 for f32, 2/256 for
// bf16), for comparing folds whose summation order differs (two topologies
// folding the same contributions, or a standalone rank that cannot know its
// cluster's fold order). The lab's round verdicts do not use it: they
// recompute flodl's arithmetic and require it bit for bit (../verdict/).
import { DTYPE_BF16 } from '../wire/constants';

/** Relative tolerance of a dtype (WIRE.md 7.3). */
export function foldTolerance(dtype: number): number {
  return dtype === DTYPE_BF16 ? 2 / 256 : 1e-6;
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
