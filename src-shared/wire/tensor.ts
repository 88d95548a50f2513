// Tensor element encodings of the RoundFrame (WIRE.md 3.4): f32 LE and bf16
// (top 16 bits of the f32, round-to-nearest-even, NaN kept quiet), plus
// zero-elision (data = null means "all zeros of this shape").
import { DEFAULT_FRAME_CEILING, DTYPE_BF16, DTYPE_F32 } from './constants';
import { WireError } from './errors';

export { DTYPE_BF16, DTYPE_F32 } from './constants';

export interface TensorEntry {
  /** 0 = f32, 1 = bf16; the parser keeps any byte, the payload codec rejects unknown tags. */
  dtype: number;
  dims: number[];
  /** Raw LE element bytes; null = elided (nbytes 0 while the shape has elements). */
  data: Uint8Array | null;
}

/** The host's byte order; every typed-array fast path below assumes LE and falls back to DataView. */
export const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function numel(dims: readonly number[]): number {
  let n = 1;
  for (const d of dims) n *= d;
  return n;
}

export function elementSize(dtype: number): number {
  if (dtype === DTYPE_F32) return 4;
  if (dtype === DTYPE_BF16) return 2;
  throw new WireError('BAD_PAYLOAD', `unknown dtype tag ${dtype} (expected 0 = f32 or 1 = bf16)`);
}

export function dtypeName(dtype: number): string {
  return dtype === DTYPE_F32 ? 'f32' : dtype === DTYPE_BF16 ? 'bf16' : `dtype${dtype}`;
}

export function isElided(t: TensorEntry): boolean {
  return t.data === null;
}

const scratchF = new Float32Array(1);
const scratchU = new Uint32Array(scratchF.buffer);

/** bf16 bits of an f32 bit pattern: RNE on the bit pattern, NaN forced quiet. */
export function f32BitsToBf16Bits(bits: number): number {
  const b = bits >>> 0;
  if ((b & 0x7f800000) === 0x7f800000 && (b & 0x007fffff) !== 0) return ((b >>> 16) | 0x0040) & 0xffff;
  return ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
}

/** bf16 bits of a number (first rounded to f32, as the sender holds f32 tensors). */
export function f32ToBf16Bits(value: number): number {
  scratchF[0] = value;
  return f32BitsToBf16Bits(scratchU[0]);
}

/** Exact widening: bits << 16. */
export function bf16BitsToF32(bits: number): number {
  scratchU[0] = (bits & 0xffff) << 16;
  return scratchF[0];
}

export function f32ToBits(value: number): number {
  scratchF[0] = value;
  return scratchU[0];
}

/** Rounds a value to what the dtype can carry (f32: fround; bf16: RNE). */
export function roundToDtype(dtype: number, value: number): number {
  if (dtype === DTYPE_BF16) return bf16BitsToF32(f32ToBf16Bits(value));
  elementSize(dtype);
  return Math.fround(value);
}

/** Checks that a full payload carries exactly numel x element size bytes. */
export function checkTensorPayload(t: TensorEntry, index = 0): void {
  const size = elementSize(t.dtype);
  if (t.data === null) return;
  const want = numel(t.dims) * size;
  if (t.data.length !== want) {
    throw new WireError(
      'BAD_PAYLOAD',
      `tensor ${index}: payload of ${t.data.length} bytes does not match numel ${numel(t.dims)} x ${size} = ${want}`,
    );
  }
}

/**
 * Decoded element values (bf16 widened exactly). Elided -> zeros, bounded by
 * `ceiling` so a hostile elided shape cannot demand a huge allocation.
 */
export function tensorValues(t: TensorEntry, ceiling = DEFAULT_FRAME_CEILING): Float32Array {
  const size = elementSize(t.dtype);
  const n = numel(t.dims);
  if (t.data === null) {
    if (n * 4 > ceiling)
      throw new WireError(
        'OVER_CEILING',
        `elided tensor of ${n} elements exceeds the frame ceiling ${ceiling}`,
      );
    return new Float32Array(n);
  }
  checkTensorPayload(t);
  const out = new Float32Array(n);
  const d = t.data;
  if (size === 4) {
    if (LITTLE_ENDIAN_HOST) new Uint8Array(out.buffer).set(d);
    else {
      const dv = new DataView(d.buffer, d.byteOffset, d.byteLength);
      for (let i = 0; i < n; i++) out[i] = dv.getFloat32(i * 4, true);
    }
  } else {
    const u = new Uint32Array(out.buffer);
    for (let i = 0; i < n; i++) u[i] = (d[2 * i] | (d[2 * i + 1] << 8)) << 16;
  }
  return out;
}

/** LE bytes of `values` in `dtype` (f32 via fround, bf16 via RNE). */
export function encodeValues(dtype: number, values: ArrayLike<number>): Uint8Array {
  const size = elementSize(dtype);
  const n = values.length;
  const f = values instanceof Float32Array ? values : Float32Array.from(values);
  if (size === 4) {
    if (LITTLE_ENDIAN_HOST) return new Uint8Array(f.buffer.slice(f.byteOffset, f.byteOffset + n * 4));
    const out = new Uint8Array(n * 4);
    const dv = new DataView(out.buffer);
    for (let i = 0; i < n; i++) dv.setFloat32(i * 4, f[i], true);
    return out;
  }
  const out = new Uint8Array(n * 2);
  for (let i = 0; i < n; i++) {
    const h = f32ToBf16Bits(f[i]);
    out[2 * i] = h & 0xff;
    out[2 * i + 1] = h >>> 8;
  }
  return out;
}

/** A full (non-elided) tensor from values; `values.length` must equal numel(dims). */
export function tensorFromValues(dtype: number, dims: number[], values: ArrayLike<number>): TensorEntry {
  if (values.length !== numel(dims)) {
    throw new WireError('BAD_PAYLOAD', `${values.length} values do not fill shape [${dims.join(', ')}]`);
  }
  return { dtype, dims: [...dims], data: encodeValues(dtype, values) };
}

/** An elided tensor: all zeros of this dtype and shape, nbytes = 0 on the wire. */
export function elidedTensor(dtype: number, dims: number[]): TensorEntry {
  elementSize(dtype);
  return { dtype, dims: [...dims], data: null };
}
