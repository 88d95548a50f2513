// Model-sized work done in slices: MACs, frame encoding and the controller's
// reduce run at most ~1 MiB at a time and yield to the event loop in between,
// so one big frame never stalls the sockets, heartbeats and timers that share
// the engine's process. Bytes and tags are identical to the one-shot codec.
import { reduceRealizedWork, reduceRealizedWorkSliced } from '@shared/fold';
import {
  MUX_HEADER_LEN,
  MUX_MAC_PREFIX_LEN,
  MUX_PROTOCOL_VERSION,
  MUX_RECORD_MAGIC,
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
 * reduce_realized_work (WIRE.md 4.5) in slices of ~SLICE_BYTES, yielding to
 * the event loop in between: flodl's arithmetic, the same at every size
 * (@shared/fold's reduce; small rounds run it without yielding).
 */
export async function reduceSliced(frames: RoundFrame[], lent?: Float32Array[]): Promise<RoundFrame> {
  const bytes = frames.reduce((a, f) => a + f.tensors.reduce((x, t) => x + (t.data?.length ?? 0), 0), 0);
  if (bytes <= 4 * SLICE_BYTES) return reduceRealizedWork(frames, lent);
  return reduceRealizedWorkSliced(frames, yieldToLoop, SLICE_BYTES >>> 2, lent);
}
