// MuxRecord (WIRE.md 3.2; flodl's relay/mux.rs): the relay <-> controller/
// coordinator record. 25-byte header (magic, version, kind, rank, payload_len,
// tag) + payload; tag = hmac_sha256_64(salt, header[0..17] || payload).
// Decoding follows flodl's finish_read: nothing is judged before all 25 header
// bytes are in; then magic, version, ceiling, the whole payload, MAC, kind,
// bincode. Every rejection carries flodl's own text in `flodlMessage`.
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
import { isBincodeError } from './bincode';
import { WireError } from './errors';
import { flodlMux } from './flodl-text';
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
    throw new WireError(
      'BAD_PAYLOAD',
      `mux payload of ${payload.length} bytes exceeds u32::MAX`,
      flodlMux.payloadTooLarge(payload.length),
    );
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

const hex2 = (b: number) => `0x${b.toString(16).padStart(2, '0')}`;

/** The TRUNCATED rejection of a unit that ended after its first byte (fill_committed hit EOF). */
export function peerClosedMidFrame(detail: string): WireError {
  return new WireError('TRUNCATED', `peer closed mid-frame: ${detail}`, flodlMux.peerClosedMidFrame());
}

/**
 * finish_read's header checks, in flodl's order, on a complete 25-byte
 * header: magic, version, ceiling. A shorter input is TRUNCATED before any
 * check (flodl reads all 25 bytes first: read_exact / fill_committed).
 */
export function parseMuxHeader(bytes: Uint8Array, opts: MuxDecodeOptions = {}): MuxHeader {
  if (bytes.length < MUX_HEADER_LEN) {
    throw peerClosedMidFrame(`mux header needs ${MUX_HEADER_LEN} bytes, got ${bytes.length}`);
  }
  checkMuxHeaderPrefix(bytes.subarray(0, MUX_HEADER_LEN), opts.ceiling ?? DEFAULT_FRAME_CEILING);
  return {
    kind: bytes[8],
    rank: readU32LE(bytes, 9),
    payloadLen: readU32LE(bytes, 13),
    tag: bytes.slice(17, 25),
  };
}

/**
 * The magic/version/ceiling checks on whatever prefix is given (magic at 4,
 * version at 8, ceiling at 17). flodl runs them only once the 25-byte header
 * is complete: parseMuxHeader and the readers call this on the whole header
 * only. On a shorter prefix it is an early look (the dissector's
 * information), never the verdict.
 */
export function checkMuxHeaderPrefix(bytes: Uint8Array, ceiling: number): void {
  if (bytes.length >= 4) {
    const magic = readU32LE(bytes, 0);
    if (magic !== MUX_RECORD_MAGIC) {
      throw new WireError(
        'BAD_MAGIC',
        `record magic 0x${magic.toString(16).padStart(8, '0')} is not 0x${MUX_RECORD_MAGIC.toString(16)}`,
        flodlMux.badMagic(magic),
      );
    }
  }
  if (bytes.length >= 8) {
    const version = readU32LE(bytes, 4);
    if (version !== MUX_PROTOCOL_VERSION) {
      throw new WireError(
        'BAD_VERSION',
        `mux protocol version ${version} is not ${MUX_PROTOCOL_VERSION}`,
        flodlMux.badVersion(version),
      );
    }
  }
  if (bytes.length >= MUX_MAC_PREFIX_LEN) {
    const len = readU32LE(bytes, 13);
    if (len > ceiling)
      throw new WireError(
        'OVER_CEILING',
        `mux payload_len ${len} exceeds the frame ceiling ${ceiling}`,
        flodlMux.overCeiling(len, ceiling, bytes[8], readU32LE(bytes, 9)),
      );
  }
}

/**
 * What a header prefix already shows, as information (the dissector's early
 * word; flodl itself waits for the 25th byte before judging anything).
 */
export function muxHeaderHints(prefix: Uint8Array, ceiling: number = DEFAULT_FRAME_CEILING): string[] {
  try {
    checkMuxHeaderPrefix(prefix.subarray(0, Math.min(prefix.length, MUX_MAC_PREFIX_LEN)), ceiling);
    return [];
  } catch (e) {
    if (!(e instanceof WireError)) throw e;
    const at = e.code === 'BAD_MAGIC' ? 4 : e.code === 'BAD_VERSION' ? 8 : MUX_MAC_PREFIX_LEN;
    return [
      `these ${at} bytes cannot start a valid mux record (${e.message}); flodl judges only once all ${MUX_HEADER_LEN} header bytes are in`,
    ];
  }
}

/** MAC check of a complete record, then the kind dispatch and the bincode decode (finish_read's tail). */
export function finishMuxRecord(
  header: Uint8Array,
  payload: Uint8Array,
  mac: Mac,
  opts: MuxDecodeOptions = {},
): MuxRecord {
  const carried = header.subarray(MUX_MAC_PREFIX_LEN, MUX_MAC_PREFIX_LEN + TAG_LEN);
  const expected = mac.tag(header.subarray(0, MUX_MAC_PREFIX_LEN), payload);
  if (!tagsEqual(expected, carried)) {
    throw new WireError(
      'HMAC_MISMATCH',
      'mux record HMAC verification failed',
      flodlMux.hmac(expected, carried, header[8], readU32LE(header, 9), payload.length),
    );
  }
  const kind = muxKindOfByte(header[8]);
  switch (kind) {
    case 'Data':
      return { kind, rank: readU32LE(header, 9), payload };
    case 'Control':
      return { kind, msg: decodeRelayControlForMux(payload, opts) };
    case 'HostFrame':
    case 'Broadcast':
      return { kind, payload };
    default:
      throw new WireError(
        'UNKNOWN_KIND',
        `unknown mux record kind ${hex2(header[8])}`,
        flodlMux.unknownKind(header[8]),
      );
  }
}

/** mux.rs decode(): bincode errors become "relay_mux: bincode decode failed: ..."; trailing bytes are ignored. */
function decodeRelayControlForMux(payload: Uint8Array, opts: MuxDecodeOptions): RelayControlMsg {
  try {
    return decodeRelayControl(payload, { modelSigs: opts.modelSigs });
  } catch (e) {
    if (isBincodeError(e)) throw new WireError('BAD_PAYLOAD', e.message, flodlMux.bincode(e.bincode));
    throw e;
  }
}

/**
 * Decodes exactly one whole record, in flodl's order: header complete
 * (TRUNCATED), magic, version, ceiling, payload complete (TRUNCATED), MAC,
 * kind, bincode; then TRAILING_BYTES (a lab rule for a single-unit decode: on
 * a stream the extra bytes would be the next record). Payloads are views
 * into `bytes`.
 */
export function decodeMuxRecord(bytes: Uint8Array, mac: Mac, opts: MuxDecodeOptions = {}): MuxRecord {
  const h = parseMuxHeader(bytes, opts);
  const end = MUX_HEADER_LEN + h.payloadLen;
  if (bytes.length < end) {
    throw peerClosedMidFrame(`mux payload needs ${h.payloadLen} bytes, got ${bytes.length - MUX_HEADER_LEN}`);
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
