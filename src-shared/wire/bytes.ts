// Byte helpers shared by every layout: hex text, concatenation and
// little-endian fixed-width fields. Pure; no Node Buffer.
import { WireError } from './errors';

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function bytesToHex(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += HEX[bytes[i]];
  return s;
}

/** Lowercase or uppercase hex, whitespace ignored. Throws BAD_PAYLOAD on bad text. */
export function hexToBytes(hex: string): Uint8Array {
  const clean = hex.replace(/\s+/g, '');
  if (clean.length % 2 !== 0)
    throw new WireError('BAD_PAYLOAD', `hex has an odd number of digits (${clean.length})`);
  if (!/^[0-9a-fA-F]*$/.test(clean)) throw new WireError('BAD_PAYLOAD', 'hex contains a non-hex character');
  const out = new Uint8Array(clean.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(clean.substr(i * 2, 2), 16);
  return out;
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let len = 0;
  for (const p of parts) len += p.length;
  const out = new Uint8Array(len);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

function view(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}

export function readU32LE(b: Uint8Array, off: number): number {
  return view(b).getUint32(off, true);
}
export function writeU32LE(b: Uint8Array, off: number, v: number): void {
  view(b).setUint32(off, v, true);
}
export function readU64LE(b: Uint8Array, off: number): bigint {
  return view(b).getBigUint64(off, true);
}
export function writeU64LE(b: Uint8Array, off: number, v: bigint): void {
  view(b).setBigUint64(off, v, true);
}
export function readF64LE(b: Uint8Array, off: number): number {
  return view(b).getFloat64(off, true);
}
export function writeF64LE(b: Uint8Array, off: number, v: number): void {
  view(b).setFloat64(off, v, true);
}

/** Four bytes of a u32 LE (magics, versions, lengths). */
export function u32Bytes(v: number): Uint8Array {
  const b = new Uint8Array(4);
  writeU32LE(b, 0, v);
  return b;
}
