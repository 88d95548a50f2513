// The controller's reduce, flodl's reduce_realized_work (WIRE.md 4.5), one
// arithmetic at every model size:
//   1. sum_frames: per tensor, f32 sums from +0.0 of the accepted frames' full
//      payloads in the given (connection) order, masses summed in f64; then
//      the sums re-encoded to the wire dtype (bf16: an RNE rounding), also
//      with a single accepted frame (0.0 + x: -0.0 becomes +0.0, a signalling
//      NaN is quieted). A tensor elided in every frame stays elided.
//   2. scale_payload, Model rounds with mass > 0: decode, multiply by
//      fround(1 / mass) in f32, re-encode (bf16: a second RNE rounding here).
//   Control rounds are a pure sum.
// The work is a generator yielding between slices of `sliceElems` elements:
// reduceRealizedWork runs it in one go, reduceRealizedWorkSliced awaits a
// pause at every yield (a model-sized reduce never stalls an event loop).
import { DTYPE_BF16, DTYPE_F32, ROUND_KIND_MODEL } from '../wire/constants';
import { WireError } from '../wire/errors';
import type { RoundFrame } from '../wire/round-frame';
import {
  LITTLE_ENDIAN_HOST,
  checkTensorPayload,
  dtypeName,
  encodeValues,
  numel,
  type TensorEntry,
} from '../wire/tensor';
import { allocAccumulator, getFoldKernel, releaseAccumulator } from './kernel';
import { encodeBf16Sums, roundSumsToBf16 } from './encode';

const DEFAULT_SLICE_ELEMS = 1 << 18;

function reduceError(message: string): WireError {
  return new WireError('BAD_PAYLOAD', message);
}

/** sum_frames' checks: one round kind, tensor count, dtypes and shapes; full payloads of numel x size bytes. */
function checkFrames(frames: readonly RoundFrame[]): void {
  const first = frames[0];
  frames.forEach((f, k) => {
    if (f.roundKind !== first.roundKind)
      throw reduceError(
        `desynced reduce rounds: frame ${k} is of kind ${f.roundKind}, frame 0 of ${first.roundKind}`,
      );
    if (f.tensors.length !== first.tensors.length)
      throw reduceError(
        `desynced reduce rounds: frame ${k} has ${f.tensors.length} tensors, frame 0 has ${first.tensors.length}`,
      );
    f.tensors.forEach((t, i) => {
      const s = first.tensors[i];
      if (t.dtype !== s.dtype)
        throw reduceError(
          `tensor ${i}: dtype ${dtypeName(t.dtype)} in frame ${k}, ${dtypeName(s.dtype)} in frame 0 (every rank must use the same bf16_wire setting)`,
        );
      if (t.dims.length !== s.dims.length || t.dims.some((d, j) => d !== s.dims[j]))
        throw reduceError(`tensor ${i}: shape [${t.dims}] in frame ${k}, [${s.dims}] in frame 0`);
      checkTensorPayload(t, i);
    });
  });
}

function* reduceSteps(
  frames: ReadonlyArray<RoundFrame | null | undefined>,
  sliceElems: number,
  scaleModel = true,
  lent?: Float32Array[],
): Generator<void, RoundFrame> {
  const accepted = frames.filter((f): f is RoundFrame => !!f);
  if (accepted.length === 0) throw reduceError('reduce_realized_work: no accepted frames');
  checkFrames(accepted);
  const { roundKind } = accepted[0];
  let weight = 0;
  for (const f of accepted) weight += f.weight;
  const scale = scaleModel && roundKind === ROUND_KIND_MODEL && weight > 0;
  const inv = Math.fround(1 / weight);
  const k = getFoldKernel();
  const tensors: TensorEntry[] = [];
  // Yield once at least a slice of elements was processed since the last yield.
  let work = 0;
  const due = (elems: number) => (work += elems) >= sliceElems && ((work = 0), true);
  for (let i = 0; i < accepted[0].tensors.length; i++) {
    const { dtype, dims } = accepted[0].tensors[i];
    const full = accepted.map((f) => f.tensors[i].data).filter((d): d is Uint8Array => d !== null);
    if (full.length === 0) {
      tensors.push({ dtype, dims: [...dims], data: numel(dims) === 0 ? new Uint8Array(0) : null });
      continue;
    }
    const n = numel(dims);
    const size = dtype === DTYPE_BF16 ? 2 : 4;
    // 1. f32 sums from +0.0 (a zeroed accumulator), frame by frame in order.
    const acc = allocAccumulator(n);
    for (const data of full) {
      for (let o = 0; o < n; o += sliceElems) {
        const piece = data.subarray(o * size, Math.min(n, o + sliceElems) * size);
        if (dtype === DTYPE_BF16) k.addBf16Into(acc, piece, o);
        else k.addF32Into(acc, piece, o);
        if (due(piece.length / size)) yield;
      }
    }
    // sum_frames' re-encode to the wire dtype, then scale_payload's decode x inv (f32) and re-encode.
    for (let o = 0; o < n; o += sliceElems) {
      const end = Math.min(n, o + sliceElems);
      if (dtype === DTYPE_BF16) roundSumsToBf16(acc, o, end, scale ? inv : undefined);
      else if (scale) scaleF32(acc, o, end, inv);
      if (due(end - o)) yield;
    }
    let data: Uint8Array;
    if (dtype === DTYPE_F32 && LITTLE_ENDIAN_HOST) {
      // The consensus is a view of the sums: the caller gives them back once it is sent.
      data = new Uint8Array(acc.buffer, acc.byteOffset, n * 4);
      lent?.push(acc);
    } else {
      if (dtype === DTYPE_BF16) {
        data = new Uint8Array(n * 2);
        for (let o = 0; o < n; o += sliceElems) {
          const end = Math.min(n, o + sliceElems);
          encodeBf16Sums(acc, o, end, data, o);
          if (due(end - o)) yield;
        }
      } else data = encodeValues(dtype, acc);
      // Encoded into memory of its own: the sums go back to the kernel now.
      releaseAccumulator(acc);
    }
    tensors.push({ dtype, dims: [...dims], data });
  }
  return { roundKind, weight, tensors };
}

/**
 * acc[j] *= inv (f32) for j in [from, to). A function of its own, not a loop
 * in the generator: V8 does not optimize a loop inside a generator while it
 * runs, and a small model's reduce never yields, so the loop stayed
 * interpreted for its first ~30 rounds (about 4 ms a reduce at 256 KiB, then
 * 0.5 ms).
 */
function scaleF32(acc: Float32Array, from: number, to: number, inv: number): void {
  for (let j = from; j < to; j++) acc[j] = acc[j] * inv;
}

/**
 * reduce_realized_work over the accepted frames (null = not accepted, e.g.
 * dead), in order: the consensus in flodl's arithmetic. f32 data may be views
 * of fold-kernel memory; with `lent`, that memory is pushed there for the
 * caller to give back (releaseAccumulator) once nothing reads the consensus:
 * a reduce a round that never gives it back takes fresh, page-faulting memory
 * every round, and leaves the relay's recycled sums none to reuse.
 */
export function reduceRealizedWork(
  frames: ReadonlyArray<RoundFrame | null | undefined>,
  lent?: Float32Array[],
): RoundFrame {
  const steps = reduceSteps(frames, DEFAULT_SLICE_ELEMS, true, lent);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** reduceRealizedWork awaiting `pause()` between slices of `sliceElems` elements; the same bytes. */
export async function reduceRealizedWorkSliced(
  frames: ReadonlyArray<RoundFrame | null | undefined>,
  pause: () => Promise<void>,
  sliceElems = DEFAULT_SLICE_ELEMS,
  lent?: Float32Array[],
): Promise<RoundFrame> {
  const steps = reduceSteps(frames, sliceElems, true, lent);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await pause();
  }
}

/** sum_frames alone: the f32 sums of the frames re-encoded to the wire dtype, masses summed, never scaled. */
export function sumFrames(frames: readonly RoundFrame[]): RoundFrame {
  if (frames.length === 0) throw reduceError('no frames to sum');
  const steps = reduceSteps(frames, DEFAULT_SLICE_ELEMS, false);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}
