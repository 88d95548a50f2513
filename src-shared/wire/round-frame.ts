// RoundFrame (WIRE.md 3.4): the data-channel body, the same shape on every
// tier. Header (magic, num_tensors, round_kind, weight f64) + tensors (dtype,
// ndim, dims, nbytes u64, data) + an 8-byte footer MAC over everything before it.
import {
  MAX_ROUND_FRAME_TENSORS,
  ROUND_FRAME_FOOTER_LEN,
  ROUND_FRAME_HEADER_LEN,
  ROUND_FRAME_MAGIC,
  ROUND_KIND_CONTROL,
  ROUND_KIND_MODEL,
  U32_MAX,
} from './constants';
import { WireError } from './errors';
import type { Mac } from './mac';
import { RoundFrameStreamParser, type RoundFrameStreamOptions } from './round-frame-stream';
import { numel, type TensorEntry } from './tensor';

export { ROUND_KIND_CONTROL, ROUND_KIND_MODEL } from './constants';
export {
  DTYPE_BF16,
  DTYPE_F32,
  bf16BitsToF32,
  checkTensorPayload,
  dtypeName,
  elementSize,
  elidedTensor,
  encodeValues,
  f32BitsToBf16Bits,
  f32ToBf16Bits,
  f32ToBits,
  isElided,
  numel,
  roundToDtype,
  tensorFromValues,
  tensorValues,
  type TensorEntry,
} from './tensor';

export interface RoundFrame {
  /** 0 = Model, 1 = Control. */
  roundKind: number;
  /** The realized-work mass (finite, >= 0). */
  weight: number;
  tensors: TensorEntry[];
}

export interface DecodedRoundFrame extends RoundFrame {
  /** The 8 footer bytes. */
  tag: Uint8Array;
}

export function roundKindName(k: number): string {
  return k === ROUND_KIND_MODEL ? 'Model' : k === ROUND_KIND_CONTROL ? 'Control' : `kind${k}`;
}

function tensorNbytes(t: TensorEntry): number {
  return t.data === null ? 0 : t.data.length;
}

/** 17 + sum(2 + 4*ndim + 8 + nbytes) + 8: the exact len-framed prefix value. */
export function roundFrameWireLen(frame: RoundFrame): number {
  let n = ROUND_FRAME_HEADER_LEN + ROUND_FRAME_FOOTER_LEN;
  for (const t of frame.tensors) n += 2 + 4 * t.dims.length + 8 + tensorNbytes(t);
  return n;
}

function checkEncodable(frame: RoundFrame): void {
  if (frame.roundKind !== ROUND_KIND_MODEL && frame.roundKind !== ROUND_KIND_CONTROL) {
    throw new WireError(
      'BAD_ROUND_KIND',
      `round_kind ${frame.roundKind} is neither 0 (Model) nor 1 (Control)`,
    );
  }
  if (!Number.isFinite(frame.weight) || !(frame.weight >= 0))
    throw new WireError('BAD_WEIGHT', `weight ${frame.weight} must be finite and >= 0`);
  if (frame.tensors.length > MAX_ROUND_FRAME_TENSORS) {
    throw new WireError(
      'TOO_MANY_TENSORS',
      `${frame.tensors.length} tensors, more than ${MAX_ROUND_FRAME_TENSORS}`,
    );
  }
  frame.tensors.forEach((t, i) => {
    if (!Number.isInteger(t.dtype) || t.dtype < 0 || t.dtype > 255)
      throw new WireError('BAD_PAYLOAD', `tensor ${i}: dtype ${t.dtype} is not a byte`);
    if (t.dims.length > 255)
      throw new WireError('BAD_PAYLOAD', `tensor ${i}: ${t.dims.length} dims, at most 255`);
    for (const d of t.dims) {
      if (!Number.isInteger(d) || d < 0 || d > U32_MAX)
        throw new WireError('BAD_PAYLOAD', `tensor ${i}: dim ${d} is not a u32`);
    }
  });
}

/**
 * The frame as a list of byte chunks whose concatenation is the wire form:
 * metadata chunks plus views of the tensors' own data (no model-sized copy),
 * then the footer. For the rank's streamed write after the length prefix.
 */
export function encodeRoundFrameChunks(frame: RoundFrame, mac: Mac): Uint8Array[] {
  checkEncodable(frame);
  const s = mac.stream();
  const chunks: Uint8Array[] = [];
  const push = (c: Uint8Array) => {
    if (c.length === 0) return;
    s.update(c);
    chunks.push(c);
  };
  const head = new Uint8Array(ROUND_FRAME_HEADER_LEN);
  const hv = new DataView(head.buffer);
  hv.setUint32(0, ROUND_FRAME_MAGIC, true);
  hv.setUint32(4, frame.tensors.length, true);
  head[8] = frame.roundKind;
  hv.setFloat64(9, frame.weight, true);
  push(head);
  for (const t of frame.tensors) {
    const meta = new Uint8Array(2 + 4 * t.dims.length + 8);
    const mv = new DataView(meta.buffer);
    meta[0] = t.dtype;
    meta[1] = t.dims.length;
    t.dims.forEach((d, i) => mv.setUint32(2 + 4 * i, d, true));
    mv.setBigUint64(2 + 4 * t.dims.length, BigInt(tensorNbytes(t)), true);
    push(meta);
    if (t.data) push(t.data);
  }
  chunks.push(s.finish());
  return chunks;
}

export function encodeRoundFrame(frame: RoundFrame, mac: Mac): Uint8Array {
  const chunks = encodeRoundFrameChunks(frame, mac);
  const out = new Uint8Array(roundFrameWireLen(frame));
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}

export interface RoundFrameDecodeOptions extends Pick<RoundFrameStreamOptions, 'ceiling'> {
  /**
   * Bytes after the footer. 'reject' (default): TRAILING_BYTES, the rank-side
   * rule (its streamed read must consume exactly the prefix's length).
   * 'ignore': flodl's RoundFrame::read_from over a blob or a HostFrame /
   * Broadcast payload stops at the footer and never looks further; the count
   * is returned as `trailing` (issue 16 item 6).
   */
  trailing?: 'reject' | 'ignore';
}

/**
 * Decodes one whole frame, validating in wire order (magic, tensor count,
 * round kind, weight, per-tensor cumulative nbytes vs ceiling, truncation,
 * footer MAC, then trailing bytes per `opts.trailing`). Tensor data are views
 * into `bytes`. Payload sizes and dtypes are not checked here (fold/decode
 * time, WIRE.md 3.4).
 */
export function decodeRoundFrame(
  bytes: Uint8Array,
  mac: Mac,
  opts: RoundFrameDecodeOptions = {},
): DecodedRoundFrame & { trailing: number } {
  const out: DecodedRoundFrame = { roundKind: 0, weight: 0, tensors: [], tag: new Uint8Array(0) };
  const parser = new RoundFrameStreamParser(mac, {
    ceiling: opts.ceiling,
    sink: {
      onHeader: (h) => {
        out.roundKind = h.roundKind;
        out.weight = h.weight;
      },
      onTensor: (t) => {
        // nbytes 0: elided when the shape has elements, else a genuinely empty tensor.
        out.tensors.push({
          dtype: t.dtype,
          dims: t.dims,
          data: t.nbytes === 0 && numel(t.dims) === 0 ? new Uint8Array(0) : null,
        });
      },
      onData: (index, offset, part) => {
        const t = out.tensors[index];
        // One whole-buffer push delivers each tensor in one view; join defensively otherwise.
        if (offset === 0) t.data = part;
        else {
          const joined = new Uint8Array(offset + part.length);
          joined.set(t.data!.subarray(0, offset));
          joined.set(part, offset);
          t.data = joined;
        }
      },
      onComplete: (c) => {
        out.tag = c.tag;
      },
    },
  });
  const used = parser.push(bytes);
  parser.end();
  if (used < bytes.length && opts.trailing !== 'ignore')
    throw new WireError('TRAILING_BYTES', `${bytes.length - used} bytes after the RoundFrame`);
  return { ...out, trailing: bytes.length - used };
}
