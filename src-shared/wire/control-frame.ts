// ControlFrame (WIRE.md 3.5): the control-channel body. 24-byte header
// (magic, version, tag, msg_kind, payload_len) + bincode payload. v2+ MACs
// kind || len || payload; v1 (historical, bug 6.8) MACs the payload only.
import {
  CONTROL_FRAME_HEADER_LEN,
  CONTROL_FRAME_MAGIC,
  DEFAULT_CONTROL_VERSION,
  MAX_CONTROL_PAYLOAD,
} from './constants';
import { readU32LE, writeU32LE } from './bytes';
import { WireError } from './errors';
import { TAG_LEN, tagsEqual, type Mac } from './mac';

export const MSG_KIND_CONTROL = 0x01;
export const MSG_KIND_TIMING = 0x02;
export const MSG_KIND_METRICS = 0x03;
export const MSG_KIND_PARAM_SNAPSHOT_META = 0x04;
export const MSG_KIND_HEARTBEAT = 0x05;
export const MSG_KIND_RENDEZVOUS = 0x06;
export const MSG_KIND_JOIN = 0x07;

export const MSG_KIND_NAMES: Record<number, string> = {
  1: 'Control',
  2: 'Timing',
  3: 'Metrics',
  4: 'ParamSnapshotMeta',
  5: 'Heartbeat',
  6: 'Rendezvous',
  7: 'Join',
};

export function isKnownMsgKind(kind: number): boolean {
  return kind >= MSG_KIND_CONTROL && kind <= MSG_KIND_JOIN;
}

export interface ControlFrame {
  version: number;
  msgKind: number;
  payload: Uint8Array;
  /** Filled by the decoder (and ignored by the encoder, which computes it). */
  tag?: Uint8Array;
}

export interface ControlFrameDecodeOptions {
  /** Expected CONTROL_PROTOCOL_VERSION (exact equality). Absent: any version >= 1, MAC rule by the version field. */
  version?: number;
}

/** The MAC input of a frame: payload only for v1, kind || len || payload from v2. */
export function controlFrameTag(version: number, msgKind: number, payload: Uint8Array, mac: Mac): Uint8Array {
  if (version <= 1) return mac.tag(payload);
  const kl = new Uint8Array(8);
  writeU32LE(kl, 0, msgKind);
  writeU32LE(kl, 4, payload.length);
  return mac.tag(kl, payload);
}

/** The 16 MiB payload cap exists from control protocol v2 on; flodl's v1 reader has none. */
export function controlPayloadCapApplies(version: number): boolean {
  return version >= 2;
}

export function encodeControlFrame(frame: ControlFrame, mac: Mac): Uint8Array {
  const version = frame.version ?? DEFAULT_CONTROL_VERSION;
  if (controlPayloadCapApplies(version) && frame.payload.length > MAX_CONTROL_PAYLOAD) {
    throw new WireError(
      'OVER_CEILING',
      `ControlFrame payload of ${frame.payload.length} bytes exceeds MAX_CONTROL_PAYLOAD ${MAX_CONTROL_PAYLOAD}`,
    );
  }
  const out = new Uint8Array(CONTROL_FRAME_HEADER_LEN + frame.payload.length);
  writeU32LE(out, 0, CONTROL_FRAME_MAGIC);
  writeU32LE(out, 4, version);
  out.set(controlFrameTag(version, frame.msgKind, frame.payload, mac), 8);
  writeU32LE(out, 16, frame.msgKind);
  writeU32LE(out, 20, frame.payload.length);
  out.set(frame.payload, CONTROL_FRAME_HEADER_LEN);
  return out;
}

/**
 * Header checks in flodl's reader order: magic, version, kind, length cap
 * (v2+ only). flodl reads the whole 24-byte header before checking anything
 * (an EOF inside it is a clean None), so decoders call this on a complete
 * header; on a shorter prefix it runs the checks that prefix allows, an early
 * look for the dissector, never the verdict. Returns the payload length once
 * the whole header is in, else null.
 */
export function checkControlHeaderPrefix(
  bytes: Uint8Array,
  opts: ControlFrameDecodeOptions = {},
): number | null {
  if (bytes.length >= 4) {
    const magic = readU32LE(bytes, 0);
    if (magic !== CONTROL_FRAME_MAGIC) {
      throw new WireError(
        'BAD_MAGIC',
        `ControlFrame magic 0x${magic.toString(16).padStart(8, '0')} is not 0x${CONTROL_FRAME_MAGIC.toString(16)}`,
      );
    }
  }
  if (bytes.length >= 8) {
    const version = readU32LE(bytes, 4);
    if (opts.version !== undefined ? version !== opts.version : version < 1) {
      throw new WireError(
        'BAD_VERSION',
        `ControlFrame version ${version}${opts.version !== undefined ? ` is not ${opts.version}` : ' is not a protocol version'}`,
      );
    }
  }
  if (bytes.length >= 20) {
    const kind = readU32LE(bytes, 16);
    if (!isKnownMsgKind(kind)) throw new WireError('UNKNOWN_KIND', `unknown MsgKind 0x${kind.toString(16)}`);
  }
  if (bytes.length < CONTROL_FRAME_HEADER_LEN) return null;
  const len = readU32LE(bytes, 20);
  if (controlPayloadCapApplies(readU32LE(bytes, 4)) && len > MAX_CONTROL_PAYLOAD) {
    throw new WireError(
      'OVER_CEILING',
      `ControlFrame payload_len ${len} exceeds MAX_CONTROL_PAYLOAD ${MAX_CONTROL_PAYLOAD}`,
    );
  }
  return len;
}

/**
 * Decodes exactly one whole frame: header complete (TRUNCATED), magic,
 * version, kind, length cap (v2+), payload (TRUNCATED), MAC, trailing bytes.
 */
export function decodeControlFrame(
  bytes: Uint8Array,
  mac: Mac,
  opts: ControlFrameDecodeOptions = {},
): ControlFrame & { tag: Uint8Array } {
  if (bytes.length < CONTROL_FRAME_HEADER_LEN)
    throw new WireError(
      'TRUNCATED',
      `ControlFrame header needs ${CONTROL_FRAME_HEADER_LEN} bytes, got ${bytes.length}`,
    );
  const len = checkControlHeaderPrefix(bytes.subarray(0, CONTROL_FRAME_HEADER_LEN), opts)!;
  const end = CONTROL_FRAME_HEADER_LEN + len;
  if (bytes.length < end)
    throw new WireError(
      'TRUNCATED',
      `ControlFrame payload needs ${len} bytes, got ${bytes.length - CONTROL_FRAME_HEADER_LEN}`,
    );
  const version = readU32LE(bytes, 4);
  const msgKind = readU32LE(bytes, 16);
  const payload = bytes.subarray(CONTROL_FRAME_HEADER_LEN, end);
  const tag = bytes.slice(8, 8 + TAG_LEN);
  if (!tagsEqual(controlFrameTag(version, msgKind, payload, mac), tag)) {
    throw new WireError('HMAC_MISMATCH', 'ControlFrame HMAC verification failed');
  }
  if (bytes.length > end)
    throw new WireError('TRAILING_BYTES', `${bytes.length - end} bytes after the ControlFrame`);
  return { version, msgKind, payload, tag };
}
