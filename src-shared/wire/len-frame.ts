// Len-framed loopback blob (WIRE.md 3.7; mux.rs write_len_framed,
// write_len_prefix, read_len_prefix, read_len_framed, try_read_len_framed):
// u32 LE length (not authenticated) + blob. The reader rejects len > frame
// ceiling once all 4 prefix bytes are in; a zero-length blob is legal.
import { DEFAULT_FRAME_CEILING, LEN_PREFIX_LEN, U32_MAX } from './constants';
import { readU32LE, writeU32LE } from './bytes';
import { WireError } from './errors';
import { flodlMux } from './flodl-text';

export interface LenFrameOptions {
  ceiling?: number;
}

/**
 * write_len_prefix: the ceiling first, then the u32 width (flodl's order, so a
 * length over both is named by the ceiling, which names the sender's model).
 */
export function encodeLenPrefix(len: number, ceiling: number = DEFAULT_FRAME_CEILING): Uint8Array {
  if (!Number.isInteger(len) || len < 0)
    throw new WireError('BAD_PAYLOAD', `len-frame length ${len} is not a whole number of bytes`);
  if (len > ceiling)
    throw new WireError(
      'OVER_CEILING',
      `len-framed blob of ${len} bytes exceeds the frame ceiling ${ceiling}`,
      flodlMux.lenPrefixOverCeiling(len, ceiling),
    );
  if (len > U32_MAX)
    throw new WireError(
      'OVER_CEILING',
      `len-framed blob of ${len} bytes does not fit the u32 prefix`,
      flodlMux.lenTooLarge(len),
    );
  const b = new Uint8Array(LEN_PREFIX_LEN);
  writeU32LE(b, 0, len);
  return b;
}

/**
 * write_len_framed: prefix + blob in one buffer (one atomic write). flodl's
 * write_len_framed checks only the u32 width; the lab also checks the ceiling
 * (a deliberate, lab-only early check: the reader would reject it anyway).
 */
export function encodeLenFrame(blob: Uint8Array, ceiling: number = DEFAULT_FRAME_CEILING): Uint8Array {
  const out = new Uint8Array(LEN_PREFIX_LEN + blob.length);
  out.set(encodeLenPrefix(blob.length, ceiling));
  out.set(blob, LEN_PREFIX_LEN);
  return out;
}

/** Checks a length prefix against the ceiling (before anything is buffered). */
export function checkLenPrefix(bytes4: Uint8Array, ceiling: number = DEFAULT_FRAME_CEILING): number {
  const len = readU32LE(bytes4, 0);
  if (len > ceiling)
    throw new WireError(
      'OVER_CEILING',
      `len-framed blob of ${len} bytes exceeds the frame ceiling ${ceiling}`,
      flodlMux.lenOverCeiling(len, ceiling),
    );
  return len;
}

/** Exactly one whole len-framed blob; the blob is a view into `bytes`. */
export function decodeLenFrame(bytes: Uint8Array, opts: LenFrameOptions = {}): Uint8Array {
  if (bytes.length < LEN_PREFIX_LEN)
    throw new WireError(
      'TRUNCATED',
      `peer closed mid-frame: length prefix needs 4 bytes, got ${bytes.length}`,
      flodlMux.peerClosedMidFrame(),
    );
  const len = checkLenPrefix(bytes, opts.ceiling ?? DEFAULT_FRAME_CEILING);
  const end = LEN_PREFIX_LEN + len;
  if (bytes.length < end)
    throw new WireError(
      'TRUNCATED',
      `peer closed mid-frame: len-framed blob needs ${len} bytes, got ${bytes.length - LEN_PREFIX_LEN}`,
      flodlMux.peerClosedMidFrame(),
    );
  if (bytes.length > end)
    throw new WireError('TRAILING_BYTES', `${bytes.length - end} bytes after the len-framed blob`);
  return bytes.subarray(LEN_PREFIX_LEN, end);
}
