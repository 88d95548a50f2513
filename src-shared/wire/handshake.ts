// Rank <-> relay loopback handshakes (WIRE.md 3.6), seed era (pre-v4).
// Data: 16-byte hello and 8-byte ack, no MAC. Control: 24-byte hello with a
// MAC over bytes 0..16, 16-byte ack with a MAC over bytes 0..8.
import {
  CONTROL_ACK_LEN,
  CONTROL_HANDSHAKE_LEN,
  CONTROL_HANDSHAKE_MAGIC_ACK,
  CONTROL_HANDSHAKE_MAGIC_RANK,
  DATA_ACK_LEN,
  DATA_HANDSHAKE_LEN,
  HANDSHAKE_MAGIC_CONTROLLER_ACK,
  HANDSHAKE_MAGIC_RANK,
} from './constants';
import { readU32LE, writeU32LE } from './bytes';
import { WireError } from './errors';
import { tagsEqual, type Mac } from './mac';

export interface HandshakeHello {
  version: number;
  rank: number;
  worldSize: number;
}

export interface HandshakeDecodeOptions {
  /** Expected protocol version (exact equality, as both peers check). */
  version?: number;
}

function words(...vals: number[]): Uint8Array {
  const b = new Uint8Array(4 * vals.length);
  vals.forEach((v, i) => writeU32LE(b, 4 * i, v));
  return b;
}

function withTag(body: Uint8Array, mac: Mac): Uint8Array {
  const out = new Uint8Array(body.length + 8);
  out.set(body);
  out.set(mac.tag(body), body.length);
  return out;
}

export function encodeDataHandshake(h: HandshakeHello): Uint8Array {
  return words(HANDSHAKE_MAGIC_RANK, h.version, h.rank, h.worldSize);
}

export function encodeDataAck(version: number): Uint8Array {
  return words(HANDSHAKE_MAGIC_CONTROLLER_ACK, version);
}

export function encodeControlHandshake(h: HandshakeHello, mac: Mac): Uint8Array {
  return withTag(words(CONTROL_HANDSHAKE_MAGIC_RANK, h.version, h.rank, h.worldSize), mac);
}

export function encodeControlAck(version: number, mac: Mac): Uint8Array {
  return withTag(words(CONTROL_HANDSHAKE_MAGIC_ACK, version), mac);
}

function checkFixed(
  bytes: Uint8Array,
  len: number,
  magic: number,
  what: string,
  opts: HandshakeDecodeOptions,
): number {
  if (bytes.length >= 4) {
    const m = readU32LE(bytes, 0);
    if (m !== magic)
      throw new WireError(
        'BAD_MAGIC',
        `${what} magic 0x${m.toString(16).padStart(8, '0')} is not 0x${magic.toString(16)}`,
      );
  }
  if (bytes.length < len) throw new WireError('TRUNCATED', `${what} needs ${len} bytes, got ${bytes.length}`);
  if (bytes.length > len)
    throw new WireError('TRAILING_BYTES', `${bytes.length - len} bytes after the ${len}-byte ${what}`);
  const version = readU32LE(bytes, 4);
  if (opts.version !== undefined && version !== opts.version) {
    throw new WireError('BAD_VERSION', `${what} version ${version} is not ${opts.version}`);
  }
  return version;
}

function checkTag(bytes: Uint8Array, bodyLen: number, mac: Mac, what: string): Uint8Array {
  const tag = bytes.slice(bodyLen, bodyLen + 8);
  if (!tagsEqual(mac.tag(bytes.subarray(0, bodyLen)), tag))
    throw new WireError('HMAC_MISMATCH', `${what} HMAC verification failed`);
  return tag;
}

export function decodeDataHandshake(bytes: Uint8Array, opts: HandshakeDecodeOptions = {}): HandshakeHello {
  const version = checkFixed(bytes, DATA_HANDSHAKE_LEN, HANDSHAKE_MAGIC_RANK, 'data handshake', opts);
  return { version, rank: readU32LE(bytes, 8), worldSize: readU32LE(bytes, 12) };
}

export function decodeDataAck(bytes: Uint8Array, opts: HandshakeDecodeOptions = {}): { version: number } {
  return {
    version: checkFixed(bytes, DATA_ACK_LEN, HANDSHAKE_MAGIC_CONTROLLER_ACK, 'data handshake ack', opts),
  };
}

export function decodeControlHandshake(
  bytes: Uint8Array,
  mac: Mac,
  opts: HandshakeDecodeOptions = {},
): HandshakeHello & { tag: Uint8Array } {
  const version = checkFixed(
    bytes,
    CONTROL_HANDSHAKE_LEN,
    CONTROL_HANDSHAKE_MAGIC_RANK,
    'control handshake',
    opts,
  );
  const tag = checkTag(bytes, 16, mac, 'control handshake');
  return { version, rank: readU32LE(bytes, 8), worldSize: readU32LE(bytes, 12), tag };
}

export function decodeControlAck(
  bytes: Uint8Array,
  mac: Mac,
  opts: HandshakeDecodeOptions = {},
): { version: number; tag: Uint8Array } {
  const version = checkFixed(
    bytes,
    CONTROL_ACK_LEN,
    CONTROL_HANDSHAKE_MAGIC_ACK,
    'control handshake ack',
    opts,
  );
  return { version, tag: checkTag(bytes, 8, mac, 'control handshake ack') };
}

/** v4+ control handshake (post-seed): a 32-byte model signature at 16..48, the MAC over 0..48 at 48..56. */
export const CONTROL_HANDSHAKE_V4_LEN = 56;
export const MODEL_SIG_LEN = 32;

export interface HandshakeHelloV4 extends HandshakeHello {
  modelSig: Uint8Array;
}

export function encodeControlHandshakeV4(h: HandshakeHelloV4, mac: Mac): Uint8Array {
  if (h.modelSig.length !== MODEL_SIG_LEN)
    throw new WireError('BAD_PAYLOAD', `model signature must be 32 bytes, got ${h.modelSig.length}`);
  const body = new Uint8Array(48);
  body.set(words(CONTROL_HANDSHAKE_MAGIC_RANK, h.version, h.rank, h.worldSize));
  body.set(h.modelSig, 16);
  return withTag(body, mac);
}

export function decodeControlHandshakeV4(
  bytes: Uint8Array,
  mac: Mac,
  opts: HandshakeDecodeOptions = {},
): HandshakeHelloV4 & { tag: Uint8Array } {
  const version = checkFixed(
    bytes,
    CONTROL_HANDSHAKE_V4_LEN,
    CONTROL_HANDSHAKE_MAGIC_RANK,
    'v4 control handshake',
    opts,
  );
  const tag = checkTag(bytes, 48, mac, 'v4 control handshake');
  return {
    version,
    rank: readU32LE(bytes, 8),
    worldSize: readU32LE(bytes, 12),
    modelSig: bytes.slice(16, 48),
    tag,
  };
}

/** A FixedReader check that rejects a wrong magic as soon as its 4 bytes are in. */
export function expectMagicPrefix(magic: number, what: string): (prefix: Uint8Array) => void {
  return (prefix) => {
    if (prefix.length < 4) return;
    const m = readU32LE(prefix, 0);
    if (m !== magic)
      throw new WireError(
        'BAD_MAGIC',
        `${what} magic 0x${m.toString(16).padStart(8, '0')} is not 0x${magic.toString(16)}`,
      );
  };
}
