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

/** The expected consensus at some element indices, with the magnitude scale of each (for the tolerance). */
export interface Expected {
  weight: number;
  indices: number[];
  values: Float64Array;
  scales: Float64Array;
}

/** Recomputes the mass-weighted average from the generator alone. */
export function expectedConsensus(
  seed: number,
  round: number,
  dtype: number,
  accepted: Contribution[],
  indices: number[],
): Expected {
  const masses = accepted.map((c) => rankMass(seed, c.rank, round, c.idle));
  const total = masses.reduce((a, b) => a + b, 0);
  const values = new Float64Array(indices.length);
  const scales = new Float64Array(indices.length);
  if (total > 0) {
    for (let k = 0; k < indices.length; k++) {
      let sum = 0;
      let mag = 0;
      for (let j = 0; j < accepted.length; j++) {
        if (masses[j] === 0) continue;
        const v = sentValue(dtype, masses[j], elementValue(seed, accepted[j].rank, round, indices[k]));
        sum += v;
        mag += Math.abs(v);
      }
      values[k] = sum / total;
      // Scale by the magnitude of the terms: a sum that cancels to ~0 still
      // carries the rounding error of its terms (summation order differs by topology).
      scales[k] = Math.max(Math.abs(values[k]), mag / total, Number.MIN_VALUE);
    }
  }
  return { weight: total, indices, values, scales };
}

function sameIndices(a: number[], b: number[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Compares one rank's adopted sample with an expectation computed once per round. */
export function compareAdoption(exp: Expected, dtype: number, adopted: AdoptedSample): CheckResult {
  const total = exp.weight;
  if (adopted.weight !== total) {
    return {
      verdict: 'mismatch',
      maxRelError: Infinity,
      expectedWeight: total,
      message: `reply weight ${adopted.weight}, expected ${total}`,
    };
  }
  // Weight 0 means "nothing realized": the rank keeps its own state, nothing to compare.
  if (total <= 0) return { verdict: 'ok', maxRelError: 0, expectedWeight: total };
  if (adopted.indices.length !== adopted.values.length || !sameIndices(adopted.indices, exp.indices)) {
    return {
      verdict: 'mismatch',
      maxRelError: Infinity,
      expectedWeight: total,
      message: 'sample indices differ from the expected ones',
    };
  }
  const tol = toleranceFor(dtype);
  let maxRel = 0;
  let worst = -1;
  for (let k = 0; k < exp.indices.length; k++) {
    const rel = Math.abs(adopted.values[k] - exp.values[k]) / exp.scales[k];
    if (!(rel <= maxRel)) {
      maxRel = Number.isNaN(rel) ? Infinity : rel;
      worst = exp.indices[k];
    }
  }
  if (maxRel > tol) {
    return {
      verdict: 'mismatch',
      maxRelError: maxRel,
      expectedWeight: total,
      message: `element ${worst} off by ${maxRel.toExponential(2)} (tolerance ${tol})`,
    };
  }
  return { verdict: 'ok', maxRelError: maxRel, expectedWeight: total };
}

export function checkAdoption(input: CheckInput): CheckResult {
  const { seed, round, dtype, accepted, adopted } = input;
  return compareAdoption(expectedConsensus(seed, round, dtype, accepted, adopted.indices), dtype, adopted);
}
