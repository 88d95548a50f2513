// flodl's fold arithmetic written from scratch for the tests, over whole
// frames, element by element with plain numbers (no staging, no kernel, no
// streaming): the relay's HostFold (WIRE.md 4.4) and the controller's
// reduce_realized_work (4.5). The fold module must match it byte for byte.
import { ROUND_KIND_MODEL } from '../../wire/constants';
import type { RoundFrame } from '../../wire/round-frame';
import { encodeValues, numel, tensorValues, type TensorEntry } from '../../wire/tensor';

const isFull = (t: TensorEntry) => t.data !== null && t.data.length > 0;
const toWire = (dtype: number, v: Float32Array) => encodeValues(dtype, v); // bf16: RNE, NaN quiet

/** flodl's relay fold of verified deposits in merge order: seeds verbatim until a second full payload promotes the whole frame. */
export function hostFoldReference(frames: readonly RoundFrame[]): RoundFrame {
  const first = frames[0];
  let weight = 0;
  for (const f of frames) weight += f.weight;
  const promoted = first.tensors.some((_, i) => frames.filter((f) => isFull(f.tensors[i])).length >= 2);
  const tensors = first.tensors.map((t0, i): TensorEntry => {
    const dims = [...t0.dims];
    const full = frames.map((f) => f.tensors[i]).filter(isFull);
    if (!promoted) {
      if (full.length === 1) return { dtype: t0.dtype, dims, data: Uint8Array.from(full[0].data!) };
      return { dtype: t0.dtype, dims, data: numel(dims) === 0 ? new Uint8Array(0) : null };
    }
    const sums = new Float32Array(numel(dims)); // +0.0
    for (const t of full) {
      const v = tensorValues(t);
      for (let j = 0; j < sums.length; j++) sums[j] = Math.fround(sums[j] + v[j]);
    }
    return { dtype: t0.dtype, dims, data: toWire(t0.dtype, sums) };
  });
  return { roundKind: first.roundKind, weight, tensors };
}

/** flodl's reduce_realized_work over accepted frames in connection order: sum_frames (0 + x, re-encoded), then scale_payload. */
export function reduceReference(frames: readonly RoundFrame[]): RoundFrame {
  const first = frames[0];
  let weight = 0;
  for (const f of frames) weight += f.weight;
  const scale = first.roundKind === ROUND_KIND_MODEL && weight > 0;
  const inv = Math.fround(1 / weight);
  const tensors = first.tensors.map((t0, i): TensorEntry => {
    const dims = [...t0.dims];
    const full = frames.map((f) => f.tensors[i]).filter((t) => t.data !== null);
    if (full.length === 0)
      return { dtype: t0.dtype, dims, data: numel(dims) === 0 ? new Uint8Array(0) : null };
    const sums = new Float32Array(numel(dims));
    for (const t of full) {
      const v = tensorValues(t);
      for (let j = 0; j < sums.length; j++) sums[j] = Math.fround(sums[j] + v[j]);
    }
    // sum_frames' re-encode, then scale_payload's decode, multiply, re-encode.
    const encoded = tensorValues({ dtype: t0.dtype, dims, data: toWire(t0.dtype, sums) });
    if (scale) for (let j = 0; j < encoded.length; j++) encoded[j] = Math.fround(encoded[j] * inv);
    return { dtype: t0.dtype, dims, data: toWire(t0.dtype, encoded) };
  });
  return { roundKind: first.roundKind, weight, tensors };
}
