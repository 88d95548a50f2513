// The checker: for a completed round, recompute the expected consensus on
// its own (the mass-weighted average over the ranks accepted that round,
// from the deterministic generator) and compare it with what a rank adopted,
// with the tolerances of WIRE.md 7.3. It never looks at the frames on the wire.
import { DTYPE_BF16 } from '@shared/wire/constants';
import { elementValue, rankMass, sentValue } from '../engine/synthetic';

/** WIRE.md 7.3: relative 1e-6 for f32, 2/256 for bf16. */
export function toleranceFor(dtype: number): number {
  return dtype === DTYPE_BF16 ? 2 / 256 : 1e-6;
}

/** Up to `max` evenly spread element indices (all of them for small models). */
export function sampleIndices(numel: number, max = 4096): number[] {
  if (numel <= max) return Array.from({ length: numel }, (_, i) => i);
  const out: number[] = [];
  const stride = numel / max;
  for (let i = 0; i < max; i++) out.push(Math.floor(i * stride));
  if (out[out.length - 1] !== numel - 1) out[out.length - 1] = numel - 1;
  return out;
}

export interface Contribution {
  rank: number;
  /** True for a rank configured idle (mass 0, elided tensors). */
  idle?: boolean;
}

export interface AdoptedSample {
  /** The reply's weight (the sum of accepted masses). */
  weight: number;
  indices: number[];
  values: number[];
}

export interface CheckInput {
  seed: number;
  round: number;
  dtype: number;
  accepted: Contribution[];
  adopted: AdoptedSample;
}

export interface CheckResult {
  verdict: 'ok' | 'mismatch';
  maxRelError: number;
  expectedWeight: number;
  message?: string;
}

export function expectedWeight(seed: number, round: number, accepted: Contribution[]): number {
  return accepted.reduce((s, c) => s + rankMass(seed, c.rank, round, c.idle), 0);
}

export function checkAdoption(input: CheckInput): CheckResult {
  const { seed, round, dtype, accepted, adopted } = input;
  const masses = accepted.map((c) => rankMass(seed, c.rank, round, c.idle));
  const total = masses.reduce((a, b) => a + b, 0);
  if (adopted.weight !== total) {
    return { verdict: 'mismatch', maxRelError: Infinity, expectedWeight: total, message: `reply weight ${adopted.weight}, expected ${total}` };
  }
  if (adopted.indices.length !== adopted.values.length) {
    return { verdict: 'mismatch', maxRelError: Infinity, expectedWeight: total, message: 'sample indices and values differ in length' };
  }
  // Weight 0 means "nothing realized": the rank keeps its own state, nothing to compare.
  if (total <= 0) return { verdict: 'ok', maxRelError: 0, expectedWeight: total };
  const tol = toleranceFor(dtype);
  let maxRel = 0;
  let worst = -1;
  for (let k = 0; k < adopted.indices.length; k++) {
    const i = adopted.indices[k];
    let sum = 0;
    let mag = 0;
    for (let j = 0; j < accepted.length; j++) {
      if (masses[j] === 0) continue;
      const v = sentValue(dtype, masses[j], elementValue(seed, accepted[j].rank, round, i));
      sum += v;
      mag += Math.abs(v);
    }
    const expected = sum / total;
    // Scale by the magnitude of the terms: a sum that cancels to ~0 still
    // carries the rounding error of its terms (summation order differs by topology).
    const scale = Math.max(Math.abs(expected), mag / total, Number.MIN_VALUE);
    const rel = Math.abs(adopted.values[k] - expected) / scale;
    if (!(rel <= maxRel)) {
      maxRel = Number.isNaN(rel) ? Infinity : rel;
      worst = i;
    }
  }
  if (maxRel > tol) {
    return { verdict: 'mismatch', maxRelError: maxRel, expectedWeight: total, message: `element ${worst} off by ${maxRel.toExponential(2)} (tolerance ${tol})` };
  }
  return { verdict: 'ok', maxRelError: maxRel, expectedWeight: total };
}
