// Len-framed loopback blob (WIRE.md 3.7): u32 LE length (not authenticated)
// + blob. The reader rejects len > frame ceiling; a zero-length blob is legal.
import { DEFAULT_FRAME_CEILING, LEN_PREFIX_LEN } from './constants';
import { readU32LE, writeU32LE } from './bytes';
import { WireError } from './errors';

export interface LenFrameOptions {
  ceiling?: number;
}

/** write_len_prefix: rejects len > ceiling, like the reader. */
export function encodeLenPrefix(len: number, ceiling: number = DEFAULT_FRAME_CEILING): Uint8Array {
  if (!Number.isInteger(len) || len < 0)
    throw new WireError('BAD_PAYLOAD', `len-frame length ${len} is not a u32`);
  if (len > ceiling)
    throw new WireError(
      'OVER_CEILING',
      `len-framed blob of ${len} bytes exceeds the frame ceiling ${ceiling}`,
    );
  const b = new Uint8Array(LEN_PREFIX_LEN);
  writeU32LE(b, 0, len);
  return b;
}

/** write_len_framed: prefix + blob in one buffer (one atomic write). */
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
    );
  return len;
}

/** Exactly one whole len-framed blob; the blob is a view into `bytes`. */
export function decodeLenFrame(bytes: Uint8Array, opts: LenFrameOptions = {}): Uint8Array {
  if (bytes.length < LEN_PREFIX_LEN)
    throw new WireError('TRUNCATED', `length prefix needs 4 bytes, got ${bytes.length}`);
  const len = checkLenPrefix(bytes, opts.ceiling ?? DEFAULT_FRAME_CEILING);
  const end = LEN_PREFIX_LEN + len;
  if (bytes.length < end)
    throw new WireError(
      'TRUNCATED',
      `len-framed blob needs ${len} bytes, got ${bytes.length - LEN_PREFIX_LEN}`,
    );
  if (bytes.length > end)
    throw new WireError('TRAILING_BYTES', `${bytes.length - end} bytes after the len-framed blob`);
  return bytes.subarray(LEN_PREFIX_LEN, end);
}
