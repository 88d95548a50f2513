// Model-sized work done in slices: MACs, frame encoding and the controller's
// reduce run at most ~1 MiB at a time and yield to the event loop in between,
// so one big frame never stalls the sockets, heartbeats and timers that share
// the engine's process. Bytes and tags are identical to the one-shot codec.
import { FoldAccumulator, encodeFoldedTensor, reduceRealizedWork } from '@shared/fold';
import { WireError } from '@shared/wire/errors';
import {
  MUX_HEADER_LEN,
  MUX_MAC_PREFIX_LEN,
  MUX_PROTOCOL_VERSION,
  MUX_RECORD_MAGIC,
  ROUND_KIND_MODEL,
} from '@shared/wire/constants';
import { writeU32LE } from '@shared/wire/bytes';
import type { Mac } from '@shared/wire/mac';
import { encodeRoundFrameChunks, type RoundFrame } from '@shared/wire/round-frame';

export const SLICE_BYTES = 1 << 20;

export const yieldToLoop = (): Promise<void> => new Promise((r) => setImmediate(r));

/** A Mac that computes nothing: lets the codec lay out a frame while the real MAC runs in slices. */
const NO_MAC: Mac = {
  salt: new Uint8Array(16),
  tag: () => new Uint8Array(8),
  stream: () => ({ update: () => {}, finish: () => new Uint8Array(8) }),
};

/** The 8-byte tag over the concatenation of `parts`, yielding every SLICE_BYTES. */
export async function macSliced(mac: Mac, parts: Uint8Array[]): Promise<Uint8Array> {
  const s = mac.stream();
  let since = 0;
  for (const p of parts) {
    for (let o = 0; o < p.length; o += SLICE_BYTES) {
      const piece = p.subarray(o, Math.min(p.length, o + SLICE_BYTES));
      s.update(piece);
      since += piece.length;
      if (since >= SLICE_BYTES) {
        since = 0;
        await yieldToLoop();
      }
    }
  }
  return s.finish();
}

/** A RoundFrame as wire chunks (tensor data as views, no model-sized copy), footer MAC computed in slices. */
export async function encodeRoundFrameSliced(
  frame: RoundFrame,
  mac: Mac,
): Promise<{ chunks: Uint8Array[]; length: number }> {
  const laid = encodeRoundFrameChunks(frame, NO_MAC);
  const body = laid.slice(0, -1);
  const footer = await macSliced(mac, body);
  const chunks = [...body, footer];
  return { chunks, length: chunks.reduce((a, c) => a + c.length, 0) };
}

/** The 25-byte mux header for a payload given as chunks (HostFrame/Broadcast), tag computed in slices. */
export async function muxHeaderSliced(
  kindByte: number,
  rank: number,
  payload: Uint8Array[],
  mac: Mac,
): Promise<Uint8Array> {
  const h = new Uint8Array(MUX_HEADER_LEN);
  writeU32LE(h, 0, MUX_RECORD_MAGIC);
  writeU32LE(h, 4, MUX_PROTOCOL_VERSION);
  h[8] = kindByte;
  writeU32LE(h, 9, rank);
  writeU32LE(
    h,
    13,
    payload.reduce((a, c) => a + c.length, 0),
  );
  h.set(await macSliced(mac, [h.subarray(0, MUX_MAC_PREFIX_LEN), ...payload]), MUX_MAC_PREFIX_LEN);
  return h;
}

/**
 * reduce_realized_work (WIRE.md 4.5) in slices: frames folded in order into
 * f32 sums, then a Model round with mass > 0 scaled by fround(1 / mass).
 * Small rounds take the codec's one-shot path.
 */
export async function reduceSliced(frames: RoundFrame[]): Promise<RoundFrame> {
  const bytes = frames.reduce((a, f) => a + f.tensors.reduce((x, t) => x + (t.data?.length ?? 0), 0), 0);
  if (bytes <= 4 * SLICE_BYTES) return reduceRealizedWork(frames);
  const acc = new FoldAccumulator();
  for (let i = 0; i < frames.length; i++) {
    const f = frames[i];
    const sink = acc.beginDeposit(i);
    sink.onHeader!({ roundKind: f.roundKind, weight: f.weight, numTensors: f.tensors.length });
    for (let t = 0; t < f.tensors.length; t++) {
      const tensor = f.tensors[t];
      sink.onTensor!({ index: t, dtype: tensor.dtype, dims: tensor.dims, nbytes: tensor.data?.length ?? 0 });
      const data = tensor.data;
      if (!data) continue;
      for (let o = 0; o < data.length; o += SLICE_BYTES) {
        sink.onData!(t, o, data.subarray(o, Math.min(data.length, o + SLICE_BYTES)));
        await yieldToLoop();
      }
    }
    sink.onComplete!({ tag: new Uint8Array(8), wireLen: 0 });
  }
  const sums = acc.sums();
  if (!sums) throw new WireError('BAD_PAYLOAD', 'no accepted frames in this round');
  // f32 sums are views of the accumulator: scaled in place, then encoded.
  const { roundKind, weight, tensors } = sums;
  if (roundKind === ROUND_KIND_MODEL && weight > 0) {
    const inv = Math.fround(1 / weight);
    for (const t of tensors) {
      const v = t.values;
      if (!v) continue;
      const step = SLICE_BYTES >>> 2;
      for (let o = 0; o < v.length; o += step) {
        const end = Math.min(v.length, o + step);
        for (let i = o; i < end; i++) v[i] = v[i] * inv;
        await yieldToLoop();
      }
    }
  }
  return { roundKind, weight, tensors: tensors.map(encodeFoldedTensor) };
}
