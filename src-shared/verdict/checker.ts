// The standalone rank's own check (CLI.md 3): a rank run on its own knows
// neither its cluster's hosts nor their fold order, so it compares its
// sampled consensus with the exact mass-weighted average within the one
// tolerance rule (../fold/tolerance.ts). The lab's round verdicts are bit
// for bit instead (./round-check.ts, ./consensus.ts).
import { foldTolerance } from '../fold/tolerance';
import { elementValue, rankMass, sentValue } from '../synthetic';
import type { Contribution } from './consensus';

export type { Contribution };

/** Up to `max` evenly spread element indices (all of them for small models). */
export function sampleIndices(numel: number, max = 4096): number[] {
  if (numel <= max) return Array.from({ length: numel }, (_, i) => i);
  const out: number[] = [];
  const stride = numel / max;
  for (let i = 0; i < max; i++) out.push(Math.floor(i * stride));
  if (out[out.length - 1] !== numel - 1) out[out.length - 1] = numel - 1;
  return out;
}

export interface AdoptedSample {
  /** The reply's weight (the sum of accepted masses). */
  weight: number;
  indices: number[];
  values: number[];
}

export interface SampleCheckInput {
  seed: number;
  round: number;
  dtype: number;
  accepted: Contribution[];
  adopted: AdoptedSample;
}

export interface SampleCheckResult {
  verdict: 'ok' | 'mismatch';
  maxRelError: number;
  expectedWeight: number;
  message?: string;
}

/** The sampled consensus against the exact average, within foldTolerance (scaled by the terms' magnitude). */
export function checkAdoption(input: SampleCheckInput): SampleCheckResult {
  const { seed, round, dtype, accepted, adopted } = input;
  const masses = accepted.map((c) => rankMass(seed, c.rank, round, c.idle));
  const total = masses.reduce((a, b) => a + b, 0);
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
  const tol = foldTolerance(dtype);
  let maxRel = 0;
  let worst = -1;
  adopted.indices.forEach((index, k) => {
    let sum = 0;
    let mag = 0;
    accepted.forEach((c, j) => {
      if (masses[j] === 0) return;
      const v = sentValue(dtype, masses[j], elementValue(seed, c.rank, round, index));
      sum += v;
      mag += Math.abs(v);
    });
    const want = sum / total;
    // Scaled by the terms' magnitude: a sum that cancels to ~0 still carries their rounding.
    const scale = Math.max(Math.abs(want), mag / total, Number.MIN_VALUE);
    const rel = Math.abs(adopted.values[k] - want) / scale;
    if (!(rel <= maxRel)) {
      maxRel = Number.isNaN(rel) ? Infinity : rel;
      worst = index;
    }
  });
  if (adopted.indices.length !== adopted.values.length || maxRel > tol) {
    return {
      verdict: 'mismatch',
      maxRelError: maxRel,
      expectedWeight: total,
      message: `element ${worst} off by ${maxRel.toExponential(2)} (tolerance ${tol})`,
    };
  }
  return { verdict: 'ok', maxRelError: maxRel, expectedWeight: total };
}
