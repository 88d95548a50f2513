// The subset of bincode 2 `config::standard()` the protocol uses (WIRE.md
// 3.3): little-endian, unsigned varints with the 0xFB/0xFC/0xFD markers,
// zigzag signed ints, strings, Vec, Option, enum indices, f32/f64.
// Every decoding failure is a WireError BAD_PAYLOAD.
import { WireError } from './errors';
import { utf8Decode, utf8Encode } from './utf8';

const U16_MARK = 0xfb;
const U32_MARK = 0xfc;
const U64_MARK = 0xfd;
const U128_MARK = 0xfe;

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

export class BincodeReader {
  offset = 0;
  private readonly dv: DataView;

  constructor(private readonly bytes: Uint8Array) {
    this.dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get remaining(): number {
    return this.bytes.length - this.offset;
  }

  private need(n: number, what: string): number {
    if (this.remaining < n) {
      throw new WireError(
        'BAD_PAYLOAD',
        `bincode: unexpected end of input reading ${what} at byte ${this.offset}`,
      );
    }
    const at = this.offset;
    this.offset += n;
    return at;
  }

  u8(): number {
    return this.bytes[this.need(1, 'u8')];
  }

  bool(): boolean {
    const b = this.u8();
    if (b > 1) throw new WireError('BAD_PAYLOAD', `bincode: invalid bool byte ${b}`);
    return b === 1;
  }

  /** Unsigned varint as a bigint (any u64). */
  varintBig(): bigint {
    const m = this.u8();
    if (m < 251) return BigInt(m);
    if (m === U16_MARK) return BigInt(this.dv.getUint16(this.need(2, 'u16 varint'), true));
    if (m === U32_MARK) return BigInt(this.dv.getUint32(this.need(4, 'u32 varint'), true));
    if (m === U64_MARK) return this.dv.getBigUint64(this.need(8, 'u64 varint'), true);
    if (m === U128_MARK) throw new WireError('BAD_PAYLOAD', 'bincode: u128 varint where at most u64 fits');
    throw new WireError('BAD_PAYLOAD', `bincode: invalid varint marker 0x${m.toString(16)}`);
  }

  /** Unsigned varint that must fit `max` (u32 by default) as a JS number. */
  varint(max: number = 0xffff_ffff): number {
    const v = this.varintBig();
    if (v > BigInt(max)) throw new WireError('BAD_PAYLOAD', `bincode: integer ${v} exceeds ${max}`);
    return Number(v);
  }

  /** u64 / usize values the lab keeps as numbers: must be a safe integer. */
  varintU64(): number {
    return this.varint(Number.MAX_SAFE_INTEGER);
  }

  svarint(): number {
    const z = this.varintBig();
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

  /** A length prefix, checked against what is left so a hostile length never allocates. */
  length(elementMinBytes = 1): number {
    const n = this.varintU64();
    if (n * elementMinBytes > this.remaining) {
      throw new WireError('BAD_PAYLOAD', `bincode: length ${n} exceeds the ${this.remaining} bytes left`);
    }
    return n;
  }

  string(): string {
    const n = this.length();
    return utf8Decode(this.raw(n));
  }

  raw(n: number): Uint8Array {
    const at = this.need(n, `${n} raw bytes`);
    return this.bytes.subarray(at, at + n);
  }

  vec<T>(each: (r: this) => T, elementMinBytes = 1): T[] {
    const n = this.length(elementMinBytes);
    const out: T[] = [];
    for (let i = 0; i < n; i++) out.push(each(this));
    return out;
  }

  option<T>(some: (r: this) => T): T | null {
    const tag = this.u8();
    if (tag === 0) return null;
    if (tag === 1) return some(this);
    throw new WireError('BAD_PAYLOAD', `bincode: invalid Option tag ${tag}`);
  }
}
