// Re-encoding the fold's f32 sums as bf16 (round-to-nearest-even on the bit
// pattern, NaN forced quiet: f32BitsToBf16Bits), the one model-sized pass of
// a bf16 round that is not a kernel add. Reading the sums through a Uint32
// view and writing a Uint16 view is several times faster than converting
// value by value through a scratch float (about 20 ms for a 16 MiB model on
// this kind of machine); the WebAssembly kernel's SIMD encoder does most of
// it where the sums live in its memory.
import { DTYPE_BF16 } from '../wire/constants';
import { LITTLE_ENDIAN_HOST, encodeValues } from '../wire/tensor';
import { getFoldKernel } from './kernel';

/** bf16 bytes (LE) of `sums[from, to)`, written into `out` at element `at` (a fresh array when omitted). */
export function encodeBf16Sums(
  sums: Float32Array,
  from = 0,
  to = sums.length,
  out?: Uint8Array,
  at = 0,
): Uint8Array {
  const n = to - from;
  const dst = out ?? new Uint8Array(n * 2);
  if (!LITTLE_ENDIAN_HOST || ((dst.byteOffset + at * 2) & 1) !== 0) {
    dst.set(encodeValues(DTYPE_BF16, sums.subarray(from, to)), at * 2);
    return dst;
  }
  // The kernel's SIMD encoder takes what it can (sums in its own memory, whole groups of 8).
  const done = getFoldKernel().encodeBf16Into?.(sums, from, to, dst, at) ?? 0;
  if (done === n) return dst;
  from += done;
  at += done;
  const rest = n - done;
  const u = new Uint32Array(sums.buffer, sums.byteOffset + from * 4, rest);
  const h = new Uint16Array(dst.buffer, dst.byteOffset + at * 2, rest);
  for (let i = 0; i < rest; i++) {
    const b = u[i];
    // NaN (exponent all ones, mantissa non-zero): keep the top bits, force quiet.
    h[i] = (b & 0x7fffffff) > 0x7f800000 ? (b >>> 16) | 0x0040 : (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
  }
  return dst;
}

/**
 * sums[from, to) rounded in place to the values bf16 can carry: what
 * decode(encode(x)) gives (RNE, NaN forced quiet), i.e. flodl's re-encode of
 * the sums to the wire dtype followed by scale_payload's decode; then, when
 * `scale` is given, multiplied by it in f32 (scale_payload), in the same pass.
 */
export function roundSumsToBf16(sums: Float32Array, from = 0, to = sums.length, scale?: number): void {
  const u = new Uint32Array(sums.buffer, sums.byteOffset + from * 4, to - from);
  const f = sums.subarray(from, to);
  for (let i = 0; i < u.length; i++) {
    const b = u[i];
    u[i] =
      (b & 0x7fffffff) > 0x7f800000
        ? ((b >>> 16) | 0x0040) << 16
        : (((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) << 16) >>> 0;
    if (scale !== undefined) f[i] = f[i] * scale;
  }
}
