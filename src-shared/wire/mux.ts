// MuxRecord (WIRE.md 3.2): the relay <-> controller/coordinator record.
// 25-byte header (magic, version, kind, rank, payload_len, tag) + payload;
// tag = hmac_sha256_64(salt, header[0..17] || payload).
import {
  DEFAULT_FRAME_CEILING,
  MUX_HEADER_LEN,
  MUX_MAC_PREFIX_LEN,
  MUX_PROTOCOL_VERSION,
  MUX_RECORD_MAGIC,
  REC_BROADCAST,
  REC_CONTROL,
  REC_DATA,
  REC_HOST_FRAME,
  U32_MAX,
} from './constants';
import { readU32LE, writeU32LE } from './bytes';
import { WireError } from './errors';
import { TAG_LEN, tagsEqual, type Mac } from './mac';
import { decodeRelayControl, encodeRelayControl, type RelayControlMsg } from './relay-control';

export type MuxRecord =
  | { kind: 'Data'; rank: number; payload: Uint8Array }
  | { kind: 'Control'; msg: RelayControlMsg }
  | { kind: 'HostFrame'; payload: Uint8Array }
  | { kind: 'Broadcast'; payload: Uint8Array };

export type MuxKind = MuxRecord['kind'];

export const MUX_KIND_BYTE: Record<MuxKind, number> = {
  Data: REC_DATA,
  Control: REC_CONTROL,
  HostFrame: REC_HOST_FRAME,
  Broadcast: REC_BROADCAST,
};

export function muxKindOfByte(b: number): MuxKind | null {
  switch (b) {
    case REC_DATA:
      return 'Data';
    case REC_CONTROL:
      return 'Control';
    case REC_HOST_FRAME:
      return 'HostFrame';
    case REC_BROADCAST:
      return 'Broadcast';
    default:
      return null;
  }
}

export interface MuxDecodeOptions {
  /** Frame ceiling for payload_len (default 1 GiB). Equal to it is allowed. */
  ceiling?: number;
  /** Decode Hello.model_sigs (control protocol v4+). */
  modelSigs?: boolean;
}

/** The payload bytes a record carries (Control = its bincode message). */
export function muxPayloadOf(rec: MuxRecord): Uint8Array {
  return rec.kind === 'Control' ? encodeRelayControl(rec.msg) : rec.payload;
}

/**
 * The 25-byte header for `payload`, for the split header/payload write of
 * HostFrame and Broadcast (the bytes are identical to encodeMuxRecord's).
 */
export function encodeMuxHeader(kindByte: number, rank: number, payload: Uint8Array, mac: Mac): Uint8Array {
  if (payload.length > U32_MAX)
    throw new WireError('BAD_PAYLOAD', `mux payload of ${payload.length} bytes exceeds u32::MAX`);
  if (!Number.isInteger(rank) || rank < 0 || rank > U32_MAX)
    throw new WireError('BAD_PAYLOAD', `mux rank out of u32 range: ${rank}`);
  const h = new Uint8Array(MUX_HEADER_LEN);
  writeU32LE(h, 0, MUX_RECORD_MAGIC);
  writeU32LE(h, 4, MUX_PROTOCOL_VERSION);
  h[8] = kindByte;
  writeU32LE(h, 9, rank);
  writeU32LE(h, 13, payload.length);
  h.set(mac.tag(h.subarray(0, MUX_MAC_PREFIX_LEN), payload), MUX_MAC_PREFIX_LEN);
  return h;
}

/** One buffer of header + payload (the single atomic write of Data and Control). */
export function encodeMuxRecord(rec: MuxRecord, mac: Mac): Uint8Array {
  const payload = muxPayloadOf(rec);
  const rank = rec.kind === 'Data' ? rec.rank : 0;
  const header = encodeMuxHeader(MUX_KIND_BYTE[rec.kind], rank, payload, mac);
  const out = new Uint8Array(MUX_HEADER_LEN + payload.length);
  out.set(header);
  out.set(payload, MUX_HEADER_LEN);
  return out;
}

export interface MuxHeader {
  /** Raw kind byte (an unknown kind is only rejected after the MAC). */
  kind: number;
  rank: number;
  payloadLen: number;
  tag: Uint8Array;
}

/**
 * Header checks in flodl's order: magic, version, ceiling. Accepts a prefix
 * shorter than 25 bytes as long as the checks it can run pass, then reports
 * TRUNCATED, so a reader can reject a bad magic after 4 bytes.
 */
export function parseMuxHeader(bytes: Uint8Array, opts: MuxDecodeOptions = {}): MuxHeader {
  checkMuxHeaderPrefix(bytes, opts.ceiling ?? DEFAULT_FRAME_CEILING);
  if (bytes.length < MUX_HEADER_LEN) {
    throw new WireError('TRUNCATED', `mux header needs ${MUX_HEADER_LEN} bytes, got ${bytes.length}`);
  }
  return {
    kind: bytes[8],
    rank: readU32LE(bytes, 9),
    payloadLen: readU32LE(bytes, 13),
    tag: bytes.slice(17, 25),
  };
}

/** Runs every header check the available prefix allows (magic at 4, version at 8, ceiling at 17). */
export function checkMuxHeaderPrefix(bytes: Uint8Array, ceiling: number): void {
  if (bytes.length >= 4) {
    const magic = readU32LE(bytes, 0);
    if (magic !== MUX_RECORD_MAGIC) {
      throw new WireError(
        'BAD_MAGIC',
        `record magic 0x${magic.toString(16).padStart(8, '0')} is not 0x${MUX_RECORD_MAGIC.toString(16)}`,
      );
    }
  }
  if (bytes.length >= 8) {
    const version = readU32LE(bytes, 4);
    if (version !== MUX_PROTOCOL_VERSION) {
      throw new WireError('BAD_VERSION', `mux protocol version ${version} is not ${MUX_PROTOCOL_VERSION}`);
    }
  }
  if (bytes.length >= MUX_MAC_PREFIX_LEN) {
    const len = readU32LE(bytes, 13);
    if (len > ceiling)
      throw new WireError('OVER_CEILING', `mux payload_len ${len} exceeds the frame ceiling ${ceiling}`);
  }
}

/** MAC check of a complete record, then the kind dispatch (steps 6 and 7). */
export function finishMuxRecord(
  header: Uint8Array,
  payload: Uint8Array,
  mac: Mac,
  opts: MuxDecodeOptions = {},
): MuxRecord {
  const expected = mac.tag(header.subarray(0, MUX_MAC_PREFIX_LEN), payload);
  if (!tagsEqual(expected, header.subarray(MUX_MAC_PREFIX_LEN, MUX_MAC_PREFIX_LEN + TAG_LEN))) {
    throw new WireError('HMAC_MISMATCH', 'mux record HMAC verification failed');
  }
  const kind = muxKindOfByte(header[8]);
  switch (kind) {
    case 'Data':
      return { kind, rank: readU32LE(header, 9), payload };
    case 'Control':
      return { kind, msg: decodeRelayControl(payload, { modelSigs: opts.modelSigs }) };
    case 'HostFrame':
    case 'Broadcast':
      return { kind, payload };
    default:
      throw new WireError(
        'UNKNOWN_KIND',
        `unknown mux record kind 0x${header[8].toString(16).padStart(2, '0')}`,
      );
  }
}

/**
 * Decodes exactly one whole record. Order: magic, version, ceiling, payload
 * length (TRUNCATED), MAC, kind, then TRAILING_BYTES. Payloads are views into
 * `bytes`.
 */
export function decodeMuxRecord(bytes: Uint8Array, mac: Mac, opts: MuxDecodeOptions = {}): MuxRecord {
  const h = parseMuxHeader(bytes, opts);
  const end = MUX_HEADER_LEN + h.payloadLen;
  if (bytes.length < end) {
    throw new WireError(
      'TRUNCATED',
      `mux payload needs ${h.payloadLen} bytes, got ${bytes.length - MUX_HEADER_LEN}`,
    );
  }
  const rec = finishMuxRecord(
    bytes.subarray(0, MUX_HEADER_LEN),
    bytes.subarray(MUX_HEADER_LEN, end),
    mac,
    opts,
  );
  if (bytes.length > end)
    throw new WireError('TRAILING_BYTES', `${bytes.length - end} bytes after the mux record`);
  return rec;
}
