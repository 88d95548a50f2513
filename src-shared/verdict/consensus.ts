// The consensus a round must deliver, recomputed from scratch: from the
// deterministic generator (../synthetic.ts), the accepted ranks, their masses
// and the order they were folded in, with flodl's arithmetic written out
// element by element. It shares no code with the engine's fold
// (../fold/), so a fold bug cannot hide itself here.
//
// flodl's arithmetic (WIRE.md 4.4, 4.5; issue 16):
//   relay (HostFold), per host, deposits in merge order: one full deposit is
//     shipped verbatim; two or more promote the frame to f32 sums from +0.0
//     (0 + x1 + x2 ...), re-encoded to the wire dtype (bf16: RNE #1); elided
//     deposits (idle ranks) merge nothing; all elided ships elided.
//   controller, HostFrames in connection order: f32 sums from +0.0,
//     re-encoded to the wire dtype (RNE #2), then for mass W > 0 decoded,
//     multiplied by fround(1 / W) in f32 and re-encoded (RNE #3).
// Forward and direct modes are the same with one rank per "host": every
// frame reaches the controller verbatim.
import { DTYPE_BF16, DTYPE_F32, ROUND_KIND_MODEL } from '../wire/constants';
import { TAG_LEN, type Mac } from '../wire/mac';
import { encodeRoundFrameChunks, type RoundFrame } from '../wire/round-frame';
import type { TensorEntry } from '../wire/tensor';
import { fillValues, rankMass, type ModelLayout } from '../synthetic';

export interface Contribution {
  rank: number;
  /** True for a rank configured idle (mass 0, elided tensors). */
  idle?: boolean;
}

export interface ConsensusInput {
  seed: number;
  round: number;
  dtype: number;
  layout: ModelLayout;
  /**
   * The accepted contributions in reduce order: one group per HostFrame the
   * controller summed (fold mode: a host's ranks in its relay's merge order;
   * forward and direct modes: one rank per group).
   */
  groups: Contribution[][];
}

export interface ExpectedConsensus {
  /** The consensus frame (Model, weight = the accepted masses' sum), data in the wire dtype. */
  frame: RoundFrame;
  weight: number;
  /** Largest |consensus - exact mean| over every element, the exact mean taken in f64 over the contributions as sent. */
  maxAbsErrorVsExactMean: number;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** x (an f32 value) rounded to bf16 with RNE, NaN kept quiet (WIRE.md 3.4), as an f32 value. */
function bf16(x: number): number {
  f32[0] = x;
  const b = u32[0];
  u32[0] =
    (b & 0x7fffffff) > 0x7f800000
      ? ((b >>> 16) | 0x40) << 16
      : ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) << 16;
  return f32[0];
}

/** Values `dtype` carries: f32 rounding, or bf16 after it. */
const toWire = (dtype: number, x: number) => (dtype === DTYPE_BF16 ? bf16(Math.fround(x)) : Math.fround(x));

/** Elements per block the values are generated in (bounds the scratch memory for any model size). */
const BLOCK = 1 << 13;

interface BlockInput {
  dtype: number;
  /** Per contributing host, how many full deposits it merged (in merge order). */
  hostSizes: number[];
  /** Each full deposit's mass, host after host in merge order (the order of `scratch`). */
  masses: number[];
  /** Each full deposit's generated values for this block. */
  scratch: Float32Array[];
  scale: boolean;
  inv: number;
  weight: number;
}

/**
 * One block of `m` elements written to `dv` from byte `at0`; returns the block's
 * largest error against the exact mean (Infinity for NaN). A plain function with
 * indexed loops, not part of the generator: V8 does not optimize a running
 * generator's loop, and there this loop boxed every intermediate double (about
 * 3.5 MB of young garbage per round of a 256 KiB model, a scavenge per round).
 */
function consensusBlock(x: BlockInput, m: number, dv: DataView, at0: number): number {
  const { dtype, hostSizes, masses, scratch, scale, inv, weight } = x;
  const bf = dtype === DTYPE_BF16;
  const size = bf ? 2 : 4;
  let maxErr = 0;
  for (let i = 0; i < m; i++) {
    let acc = 0; // the controller's sums start from +0.0
    let exact = 0;
    let j = 0;
    for (let h = 0; h < hostSizes.length; h++) {
      // The rank's wire value: its value pre-scaled by its mass, in the wire dtype.
      let hostValue: number;
      if (hostSizes[h] === 1) {
        hostValue = toWire(dtype, masses[j] * scratch[j][i]); // shipped verbatim
        exact += hostValue;
        j++;
      } else {
        let sum = 0; // promoted: f32 sums from +0.0, in merge order
        for (const end = j + hostSizes[h]; j < end; j++) {
          const v = toWire(dtype, masses[j] * scratch[j][i]);
          exact += v;
          sum = Math.fround(sum + v);
        }
        hostValue = toWire(dtype, sum); // the relay's re-encode
      }
      acc = Math.fround(acc + hostValue);
    }
    let out = toWire(dtype, acc); // sum_frames' re-encode
    if (scale) out = toWire(dtype, out * inv); // scale_payload
    const err = Math.abs(out - exact / weight);
    if (err > maxErr || Number.isNaN(err)) maxErr = Number.isNaN(err) ? Infinity : err;
    const at = at0 + i * size;
    if (!bf) dv.setFloat32(at, out, true);
    else {
      f32[0] = out;
      dv.setUint16(at, u32[0] >>> 16, true);
    }
  }
  return maxErr;
}

/** The work, yielding after each block of elements (see expectedConsensus / expectedConsensusSliced). */
function* consensusSteps(input: ConsensusInput): Generator<void, ExpectedConsensus> {
  const { seed, round, dtype, layout, groups } = input;
  if (dtype !== DTYPE_F32 && dtype !== DTYPE_BF16) throw new Error(`unknown dtype ${dtype}`);
  const hosts = groups.map((g) => {
    const masses = g.map((c) => rankMass(seed, c.rank, round, c.idle));
    let weight = 0;
    for (const m of masses) weight += m;
    // An idle rank (mass 0) ships elided tensors: it merges nothing.
    const full = g.map((c, j) => ({ rank: c.rank, mass: masses[j] })).filter((c) => c.mass !== 0);
    return { weight, full };
  });
  let weight = 0;
  for (const h of hosts) weight += h.weight;
  const contributing = hosts.filter((h) => h.full.length > 0);
  const inv = Math.fround(1 / weight);
  const scale = weight > 0; // ROUND_KIND_MODEL: lab ranks send Model rounds
  const size = dtype === DTYPE_BF16 ? 2 : 4;
  const ranks = contributing.flatMap((h) => h.full);
  const scratch = ranks.map(() => new Float32Array(Math.min(BLOCK, Math.max(1, layout.numel))));
  const block: BlockInput = {
    dtype,
    hostSizes: contributing.map((h) => h.full.length),
    masses: ranks.map((c) => c.mass),
    scratch,
    scale,
    inv,
    weight,
  };
  let maxErr = 0;
  let start = 0;
  const tensors: TensorEntry[] = [];
  for (const dims of layout.shapes) {
    const n = dims.reduce((a, b) => a * b, 1);
    const first = start;
    start += n;
    if (contributing.length === 0) {
      tensors.push({ dtype, dims: [...dims], data: n === 0 ? new Uint8Array(0) : null });
      continue;
    }
    const data = new Uint8Array(n * size);
    const dv = new DataView(data.buffer);
    for (let b = 0; b < n; b += BLOCK) {
      const m = Math.min(BLOCK, n - b);
      ranks.forEach((c, j) => fillValues(seed, c.rank, round, first + b, scratch[j].subarray(0, m)));
      maxErr = Math.max(maxErr, consensusBlock(block, m, dv, b * size));
      yield;
    }
    tensors.push({ dtype, dims: [...dims], data });
  }
  return {
    frame: { roundKind: ROUND_KIND_MODEL, weight, tensors },
    weight,
    maxAbsErrorVsExactMean: scale ? maxErr : 0,
  };
}

/** The consensus a round must deliver, computed in one go. */
export function expectedConsensus(input: ConsensusInput): ExpectedConsensus {
  const steps = consensusSteps(input);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** expectedConsensus awaiting `pause()` after every block of 8 Ki elements (about a millisecond with 8 ranks: a model-sized check never stalls an event loop). */
export async function expectedConsensusSliced(
  input: ConsensusInput,
  pause: () => Promise<void>,
): Promise<ExpectedConsensus> {
  const steps = consensusSteps(input);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await pause();
  }
}

/** A Mac that computes nothing: lays a frame out without its real footer. */
const NO_MAC: Mac = {
  salt: new Uint8Array(16),
  tag: () => new Uint8Array(TAG_LEN),
  stream: () => ({ update: () => {}, finish: () => new Uint8Array(TAG_LEN) }),
};

/**
 * The wire bytes of a frame without its 8-byte footer, as views (header,
 * tensor metadata, data): what a rank's consensus digest covers, so the
 * comparison needs no salt and covers weight, schema, elision and every element.
 */
export function frameBodyChunks(frame: RoundFrame): Uint8Array[] {
  return encodeRoundFrameChunks(frame, NO_MAC).slice(0, -1);
}
