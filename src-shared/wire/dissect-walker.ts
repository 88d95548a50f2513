// The dissector's building blocks: the Field tree type and a walker over
// fixed-size fields that stops (with a "truncated" field) when bytes run out.
import { bytesToHex } from './bytes';

export interface Field {
  name: string;
  /** Byte offset within the dissected unit. */
  offset: number;
  length: number;
  value: string;
  children?: Field[];
  /** The filter name and explanation key (src-shared/explain), e.g. 'mux.kind'. */
  key?: string;
}

export const hex32 = (v: number) => `0x${v.toString(16).padStart(8, '0')}`;

export const preview = (b: Uint8Array, max = 32) =>
  b.length <= max ? bytesToHex(b) : `${bytesToHex(b.subarray(0, max))}… (${b.length} bytes)`;

/** Walks fixed-size fields, stopping (with a "truncated" field) when bytes run out. */
export class Walker {
  readonly fields: Field[] = [];
  pos = 0;
  truncated = false;
  private readonly dv: DataView;

  constructor(
    readonly bytes: Uint8Array,
    private readonly base = 0,
  ) {
    this.dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** Adds a field of `len` bytes; returns its start offset, or -1 (and marks truncation) if it does not fit. */
  field(name: string, len: number, show: (at: number) => string, into: Field[] = this.fields): number {
    if (this.truncated) return -1;
    const at = this.pos;
    if (at + len > this.bytes.length) {
      const have = this.bytes.length - at;
      into.push({ name, offset: this.base + at, length: have, value: `truncated: ${have} of ${len} bytes` });
      this.truncated = true;
      this.pos = this.bytes.length;
      return -1;
    }
    into.push({ name, offset: this.base + at, length: len, value: show(at) });
    this.pos += len;
    return at;
  }

  u8(at: number): number {
    return this.bytes[at];
  }
  u32(at: number): number {
    return this.dv.getUint32(at, true);
  }
  u64(at: number): bigint {
    return this.dv.getBigUint64(at, true);
  }
  f64(at: number): number {
    return this.dv.getFloat64(at, true);
  }
  hex(at: number, len: number): string {
    return bytesToHex(this.bytes.subarray(at, at + len));
  }
  /** Remaining bytes as one field. */
  rest(name: string, show: (b: Uint8Array) => string): Field | null {
    if (this.pos >= this.bytes.length) return null;
    const f = {
      name,
      offset: this.base + this.pos,
      length: this.bytes.length - this.pos,
      value: show(this.bytes.subarray(this.pos)),
    };
    this.fields.push(f);
    this.pos = this.bytes.length;
    return f;
  }
}

export function shift(fields: Field[], by: number): Field[] {
  return fields.map((f) => ({
    ...f,
    offset: f.offset + by,
    children: f.children ? shift(f.children, by) : undefined,
  }));
}
