// The round verdict (issue 16, "Verdicts that check what flodl computes"):
// every rank's adopted consensus must equal, bit for bit and in every
// element, the consensus recomputed by ./consensus.ts. A rank reports a
// SHA-256 digest of the consensus frame it received (footer excluded), which
// covers the weight, the schema, the elision and every element; its sampled
// elements only name the first differing element when the digests differ.
import { sha256 } from '@noble/hashes/sha2.js';
import type { RoundFrame } from '../wire/round-frame';
import { frameBodyChunks, type ExpectedConsensus } from './consensus';

/** SHA-256 (hex) over chunks; callers with a faster hash (node:crypto) may pass their own. */
export type ChunkDigest = (chunks: Uint8Array[]) => string;

export const sha256Hex: ChunkDigest = (chunks) => {
  const h = sha256.create();
  for (const c of chunks) h.update(c);
  return Array.from(h.digest(), (b) => b.toString(16).padStart(2, '0')).join('');
};

/** What a rank adopted in a round. */
export interface AdoptedConsensus {
  weight: number;
  /** SHA-256 (hex) of the consensus frame's bytes without the footer. */
  digest: string;
  /** Sampled element indices and their values (for the message and the window). */
  indices: number[];
  values: number[];
}

export interface Expected extends ExpectedConsensus {
  digest: string;
}

export interface CheckResult {
  verdict: 'ok' | 'mismatch';
  /** Largest relative error among the sampled elements (0 when bit for bit). */
  maxRelError: number;
  expectedWeight: number;
  message?: string;
}

export function withDigest(e: ExpectedConsensus, digest: ChunkDigest = sha256Hex): Expected {
  return { ...e, digest: digest(frameBodyChunks(e.frame)) };
}

/** Element `index` of the model (tensors laid end to end) as an f32 value; elided = 0. */
export function elementOf(frame: RoundFrame, index: number): number {
  let base = 0;
  for (const t of frame.tensors) {
    const n = t.dims.reduce((a, b) => a * b, 1);
    if (index < base + n) {
      if (!t.data) return 0;
      const dv = new DataView(t.data.buffer, t.data.byteOffset, t.data.byteLength);
      const i = index - base;
      return t.dtype === 1
        ? new Float32Array(new Uint32Array([dv.getUint16(i * 2, true) << 16]).buffer)[0]
        : dv.getFloat32(i * 4, true);
    }
    base += n;
  }
  return NaN;
}

const sameValue = (a: number, b: number) => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));

/** Compares one rank's adoption with the round's expectation (computed once per round). */
export function compareAdoption(exp: Expected, adopted: AdoptedConsensus): CheckResult {
  const expectedWeight = exp.weight;
  if (adopted.weight !== expectedWeight) {
    return {
      verdict: 'mismatch',
      maxRelError: Infinity,
      expectedWeight,
      message: `reply weight ${adopted.weight}, expected ${expectedWeight}`,
    };
  }
  if (adopted.digest === exp.digest) return { verdict: 'ok', maxRelError: 0, expectedWeight };
  // The digests differ: the samples name the first differing element.
  let maxRel = 0;
  let first = -1;
  adopted.indices.forEach((index, k) => {
    const want = elementOf(exp.frame, index);
    const got = adopted.values[k];
    if (sameValue(got, want)) return;
    if (first < 0) first = k;
    const rel = Math.abs(got - want) / Math.max(Math.abs(want), Number.MIN_VALUE);
    maxRel = Number.isNaN(rel) ? Infinity : Math.max(maxRel, rel);
  });
  const where =
    first >= 0
      ? `element ${adopted.indices[first]} is ${adopted.values[first]}, flodl's arithmetic gives ${elementOf(exp.frame, adopted.indices[first])}`
      : `it differs outside the ${adopted.indices.length} sampled elements`;
  return {
    verdict: 'mismatch',
    maxRelError: maxRel,
    expectedWeight,
    message: `the consensus is not flodl's bit for bit (frame digest differs): ${where}`,
  };
}
