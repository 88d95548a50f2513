// The subset of bincode 2 `config::standard()` the protocol uses (WIRE.md
// 3.3): little-endian, unsigned varints with the 0xFB/0xFC/0xFD markers,
// zigzag signed ints, strings, Vec, Option, enum indices, f32/f64.
// The reader mirrors bincode 2.0's decoder (src/varint/decode_unsigned.rs,
// de/mod.rs, features/serde/de_owned.rs) rule for rule: every integer is read
// for its target type, and a marker wider than the target is rejected as
// bincode's InvalidIntegerType even when the value would fit; u8 is one raw
// byte; a variant index is a u32 varint; a Vec/HashMap length a usize varint;
// a String length a u64 varint. Every failure is a BincodeError (a WireError
// BAD_PAYLOAD) whose `bincode` field is bincode's own error text (its Display,
// which is its Debug form), e.g. `InvalidIntegerType { expected: U32, found: U64 }`.
import { WireError } from './errors';
import { rustUtf8Error, utf8Decode, utf8Encode } from './utf8';

const U16_MARK = 0xfb;
const U32_MARK = 0xfc;
const U64_MARK = 0xfd;

export class BincodeWriter {
  private buf = new Uint8Array(64);
  private len = 0;

  private reserve(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  private fixed(n: number, set: (v: DataView, off: number) => void): this {
    this.reserve(n);
    set(new DataView(this.buf.buffer, this.len, n), 0);
    this.len += n;
    return this;
  }

  u8(v: number): this {
    if (!Number.isInteger(v) || v < 0 || v > 255) throw new WireError('BAD_PAYLOAD', `u8 out of range: ${v}`);
    this.reserve(1);
    this.buf[this.len++] = v;
    return this;
  }

  bool(v: boolean): this {
    return this.u8(v ? 1 : 0);
  }

  /** Unsigned varint (u16/u32/u64/usize). */
  varint(v: number | bigint): this {
    const n = typeof v === 'bigint' ? v : BigInt(checkUnsigned(v));
    if (n < 0n || n >= 1n << 64n) throw new WireError('BAD_PAYLOAD', `varint out of u64 range: ${n}`);
    if (n < 251n) return this.u8(Number(n));
    if (n < 1n << 16n) return this.u8(U16_MARK).fixed(2, (d) => d.setUint16(0, Number(n), true));
    if (n < 1n << 32n) return this.u8(U32_MARK).fixed(4, (d) => d.setUint32(0, Number(n), true));
    return this.u8(U64_MARK).fixed(8, (d) => d.setBigUint64(0, n, true));
  }

  /** Signed varint: zigzag, then varint. */
  svarint(v: number): this {
    const n = BigInt(Math.trunc(v));
    return this.varint(n >= 0n ? n << 1n : (-n << 1n) - 1n);
  }

  f32(v: number): this {
    return this.fixed(4, (d) => d.setFloat32(0, v, true));
  }

  f64(v: number): this {
    return this.fixed(8, (d) => d.setFloat64(0, v, true));
  }

  string(s: string): this {
    const b = utf8Encode(s);
    return this.varint(b.length).raw(b);
  }

  /** Bytes with no length prefix ([u8; N] arrays, nested encodings). */
  raw(b: Uint8Array): this {
    this.reserve(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
    return this;
  }

  /** Vec<T>: length varint, then each element. */
  vec<T>(items: readonly T[], each: (w: this, item: T) => void): this {
    this.varint(items.length);
    for (const it of items) each(this, it);
    return this;
  }

  /** Option<T>: 00 for None (null or undefined), 01 + T for Some. */
  option<T>(v: T | null | undefined, some: (w: this, v: T) => void): this {
    if (v === null || v === undefined) return this.u8(0);
    this.u8(1);
    some(this, v);
    return this;
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

function checkUnsigned(v: number): number {
  if (!Number.isSafeInteger(v) || v < 0)
    throw new WireError('BAD_PAYLOAD', `varint must be a non-negative safe integer, got ${v}`);
  return v;
}

/** A bincode decoding failure; `bincode` is bincode 2's error text for it (also `flodlMessage`). */
export class BincodeError extends WireError {
  constructor(
    readonly bincode: string,
    readable: string,
  ) {
    super('BAD_PAYLOAD', `bincode: ${readable} (${bincode})`, bincode);
  }
}

export function isBincodeError(e: unknown): e is BincodeError {
  return e instanceof BincodeError;
}

/** Target integer types of bincode's varint decoders (IntegerType names). */
export type VarintTarget = 'U16' | 'U32' | 'U64' | 'Usize';

/** Bytes the varint fast path peeks (marker + widest payload it accepts). */
const PEEK: Record<VarintTarget, number> = { U16: 3, U32: 5, U64: 9, Usize: 9 };
const MARK_NAME: Record<number, string> = {
  0xfb: 'U16',
  0xfc: 'U32',
  0xfd: 'U64',
  0xfe: 'U128',
  0xff: 'Reserved',
};
const WIDTH_OF: Record<string, number> = { U16: 2, U32: 4, U64: 8, Usize: 8 };

export class BincodeReader {
  offset = 0;
  private readonly dv: DataView;

  constructor(private readonly bytes: Uint8Array) {
    this.dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get remaining(): number {
    return this.bytes.length - this.offset;
  }

  /** SliceReader::read: `n` bytes or UnexpectedEnd { additional: missing }. */
  private need(n: number, what: string): number {
    if (this.remaining < n) {
      throw new BincodeError(
        `UnexpectedEnd { additional: ${n - this.remaining} }`,
        `unexpected end of input reading ${what} at byte ${this.offset}`,
      );
    }
    const at = this.offset;
    this.offset += n;
    return at;
  }

  /** u8 (and i8): one raw byte, never a varint. */
  u8(): number {
    return this.bytes[this.need(1, 'u8')];
  }

  bool(): boolean {
    const b = this.u8();
    if (b > 1) throw new BincodeError(`InvalidBooleanValue(${b})`, `invalid bool byte ${b}`);
    return b === 1;
  }

  /**
   * An unsigned varint decoded for `target` exactly as bincode 2.0 does:
   * 0..=250 is the value; 0xFB/0xFC/0xFD carry u16/u32/u64 LE; a marker wider
   * than the target, 0xFE (u128) and 0xFF (reserved) are InvalidIntegerType.
   * Non-minimal encodings (fb 05 00) are accepted, as bincode does. bincode's
   * u64 fast path (taken when 9 bytes are left from the marker) names the
   * expected type U32 for 0xFE/0xFF; its slow path names U64: mirrored.
   */
  uvarint(target: VarintTarget): bigint {
    const at = this.offset;
    const m = this.bytes[this.need(1, `${target.toLowerCase()} varint`)];
    if (m <= 250) return BigInt(m);
    const found = MARK_NAME[m];
    const width = WIDTH_OF[found];
    if (width === undefined || width > WIDTH_OF[target]) {
      const fast = this.bytes.length - at >= PEEK[target];
      const expected = target === 'U64' && fast && width === undefined ? 'U32' : target;
      this.offset = at;
      throw new BincodeError(
        `InvalidIntegerType { expected: ${expected}, found: ${found} }`,
        `varint marker 0x${m.toString(16)} (${found}) where a ${target === 'Usize' ? 'usize' : target.toLowerCase()} is expected`,
      );
    }
    const p = this.need(width, `${found.toLowerCase()} varint payload`);
    if (width === 2) return BigInt(this.dv.getUint16(p, true));
    if (width === 4) return BigInt(this.dv.getUint32(p, true));
    return this.dv.getBigUint64(p, true);
  }

  u16(): number {
    return Number(this.uvarint('U16'));
  }

  u32(): number {
    return Number(this.uvarint('U32'));
  }

  u64(): bigint {
    return this.uvarint('U64');
  }

  /** An enum variant index: a u32 varint (serde's variant_seed). */
  variant(): number {
    return this.u32();
  }

  /**
   * Unsigned varint that must fit `max` as a JS number, read for the
   * narrowest bincode type holding `max` (u16, u32, else u64).
   */
  varint(max: number = 0xffff_ffff): number {
    const target: VarintTarget = max <= 0xffff ? 'U16' : max <= 0xffff_ffff ? 'U32' : 'U64';
    const v = this.uvarint(target);
    if (v > BigInt(max))
      throw new WireError('BAD_PAYLOAD', `bincode: integer ${v} exceeds ${max} (a lab limit, not bincode's)`);
    return Number(v);
  }

  /** Any u64 as a bigint. */
  varintBig(): bigint {
    return this.uvarint('U64');
  }

  /** u64 values the lab keeps as numbers: u64 rules, then a safe integer (a lab limit). */
  varintU64(): number {
    return this.varint(Number.MAX_SAFE_INTEGER);
  }

  svarint(): number {
    const z = this.uvarint('U64');
    const v = z & 1n ? -((z + 1n) >> 1n) : z >> 1n;
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new WireError('BAD_PAYLOAD', `bincode: signed integer ${v} is not a safe integer`);
    }
    return Number(v);
  }

  f32(): number {
    return this.dv.getFloat32(this.need(4, 'f32'), true);
  }

  f64(): number {
    return this.dv.getFloat64(this.need(8, 'f64'), true);
  }

  /** A Vec/HashMap length: a usize varint (serde's deserialize_seq/map). */
  length(): number {
    const n = this.uvarint('Usize');
    return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
  }

  /** String: a u64 varint length (decode_slice_len), the bytes, then UTF-8 as String::from_utf8. */
  string(): string {
    const n = this.uvarint('U64');
    if (n > BigInt(this.remaining)) {
      throw new BincodeError(
        `UnexpectedEnd { additional: ${n - BigInt(this.remaining)} }`,
        `string of ${n} bytes with ${this.remaining} bytes left`,
      );
    }
    const b = this.raw(Number(n));
    const bad = rustUtf8Error(b);
    if (bad) {
      const el = bad.errorLen === null ? 'None' : `Some(${bad.errorLen})`;
      throw new BincodeError(
        `Utf8 { inner: Utf8Error { valid_up_to: ${bad.validUpTo}, error_len: ${el} } }`,
        `string is not valid UTF-8 (byte ${bad.validUpTo})`,
      );
    }
    return utf8Decode(b);
  }

  raw(n: number): Uint8Array {
    const at = this.need(n, `${n} raw bytes`);
    return this.bytes.subarray(at, at + n);
  }

  /** [u8; N]: N raw bytes read as a tuple of u8, so a short input misses exactly one byte. */
  array(n: number): Uint8Array {
    if (this.remaining < n) {
      this.offset = this.bytes.length;
      this.need(1, `[u8; ${n}]`);
    }
    return this.raw(n);
  }

  /**
   * Vec<T>: a usize length, then the elements, read one by one as serde does
   * (no up-front check of the length against the bytes left, so a short input
   * fails where bincode fails, on the first element that does not fit; every
   * element takes at least one byte, so the loop is bounded by the input).
   */
  vec<T>(each: (r: this) => T): T[] {
    const n = this.length();
    const out: T[] = [];
    for (let i = 0; i < n; i++) {
      const before = this.offset;
      out.push(each(this));
      if (this.offset === before)
        throw new WireError('BAD_PAYLOAD', 'bincode: zero-size Vec elements are not supported');
    }
    return out;
  }

  /** Option<T>: a raw u8 tag, 0 None, 1 Some, else UnexpectedVariant (decode_option_variant). */
  option<T>(some: (r: this) => T): T | null {
    const tag = this.u8();
    if (tag === 0) return null;
    if (tag === 1) return some(this);
    throw new BincodeError(
      `UnexpectedVariant { type_name: "Option<T>", allowed: Range { min: 0, max: 1 }, found: ${tag} }`,
      `invalid Option tag ${tag}`,
    );
  }
}

/**
 * The error serde_derive raises through bincode for a variant index the enum
 * does not have (bincode's DecodeError::custom -> OtherString).
 */
export function unknownVariantError(index: number, variantCount: number, enumName: string): BincodeError {
  return new BincodeError(
    `OtherString("invalid value: integer \`${index}\`, expected variant index 0 <= i < ${variantCount}")`,
    `unknown ${enumName} variant ${index}`,
  );
}
