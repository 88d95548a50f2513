// Deterministic synthetic model tensors and masses. Every value is a pure
// function of (seed, rank, round, element index), so a rank can fill a model
// quickly and the checker can recompute any element of any round on its own,
// without having seen the rank's frame.
import { DTYPE_BF16, DTYPE_F32 } from './wire/constants';

export interface ModelLayout {
  /** Dims of each tensor; the model's element count is the sum of their numels. */
  shapes: number[][];
  numel: number;
}

/** Tensor shapes for a model of `modelBytes` bytes at f32: a 2-D weight and a 1-D remainder. */
export function modelLayout(modelBytes: number, shapes?: number[][]): ModelLayout {
  if (shapes && shapes.length > 0) {
    const numel = shapes.reduce((a, d) => a + d.reduce((x, y) => x * y, 1), 0);
    return { shapes: shapes.map((d) => [...d]), numel };
  }
  const numel = Math.max(1, Math.floor(modelBytes / 4));
  const cols = Math.min(256, numel);
  const rows = Math.floor(numel / cols);
  const rest = numel - rows * cols;
  const out: number[][] = [[rows, cols]];
  if (rest > 0) out.push([rest]);
  return { shapes: out, numel };
}

/** lowbias32 (Chris Wellons): a fast, well-mixed 32-bit integer hash. */
export function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

function streamKey(seed: number, rank: number, round: number): number {
  return mix32(mix32(mix32(seed >>> 0) ^ Math.imul(rank + 1, 0x9e3779b9)) ^ Math.imul(round + 1, 0x85ebca6b));
}

/**
 * Mass (realized work) of a rank in a round: 1..4, or 0 for an idle rank.
 * Small integers keep the weighted average well conditioned.
 */
export function rankMass(seed: number, rank: number, round: number, idle = false): number {
  if (idle) return 0;
  return 1 + (mix32(streamKey(seed, rank, round) ^ 0x5bd1e995) % 4);
}

/** Unscaled value of element `index`: uniform in [-1, 1), exactly representable in f32. */
export function elementValue(seed: number, rank: number, round: number, index: number): number {
  const key = streamKey(seed, rank, round);
  return ((mix32(key ^ Math.imul(index + 1, 0x27d4eb2f)) >>> 8) - 0x800000) / 0x800000;
}

/** Fills `out` with elements [start, start + out.length) of a rank's unscaled model. */
export function fillValues(
  seed: number,
  rank: number,
  round: number,
  start: number,
  out: Float32Array,
): void {
  const key = streamKey(seed, rank, round);
  for (let i = 0; i < out.length; i++) {
    out[i] = ((mix32(key ^ Math.imul(start + i + 1, 0x27d4eb2f)) >>> 8) - 0x800000) / 0x800000;
  }
}

/** The value a rank actually sends for one element: mass x value, rounded to the wire dtype. */
export function sentValue(dtype: number, mass: number, value: number): number {
  const f = Math.fround(mass * value);
  if (dtype === DTYPE_F32) return f;
  if (dtype === DTYPE_BF16) return bf16Round(f);
  throw new Error(`unknown dtype ${dtype}`);
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
/** f32 -> bf16 -> f32 with round-to-nearest-even (WIRE.md 3.4); finite inputs only. */
export function bf16Round(x: number): number {
  f32[0] = x;
  const bits = u32[0];
  u32[0] = ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) << 16;
  return f32[0];
}

export function dtypeCode(dtype: 'f32' | 'bf16'): number {
  return dtype === 'bf16' ? DTYPE_BF16 : DTYPE_F32;
}
