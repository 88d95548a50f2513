// The JSON unit form of CLI.md section 1: one wire unit per object with a
// `layer`; bytes are lowercase hex. Encoding rounds numbers to the dtype
// (f32: fround; bf16: RNE). Element values that JSON numbers cannot carry
// (NaN, +-Infinity, -0) are written as the strings "NaN", "Infinity",
// "-Infinity" and "-0" so they survive a round trip.
import { bytesToHex } from './bytes';
import { channelOfMagic } from './channel';
import {
  CONTROL_HANDSHAKE_MAGIC_ACK,
  CONTROL_HANDSHAKE_MAGIC_RANK,
  DTYPE_BF16,
  HANDSHAKE_MAGIC_CONTROLLER_ACK,
  HANDSHAKE_MAGIC_RANK,
  MUX_HEADER_LEN,
  ROUND_KIND_CONTROL,
} from './constants';
import { MSG_KIND_CONTROL, MSG_KIND_TIMING, decodeControlFrame, encodeControlFrame } from './control-frame';
import { DEFAULT_CONTROL_INDEX_TABLE, type ControlIndexTable } from './control-msg-tables';
import { WireError, isWireError } from './errors';
import {
  decodeControlAck,
  decodeControlHandshake,
  decodeDataAck,
  decodeDataHandshake,
  encodeControlAck,
  encodeControlHandshake,
  encodeDataAck,
  encodeDataHandshake,
} from './handshake';
import { decodeLenFrame, encodeLenFrame } from './len-frame';
import type { Mac } from './mac';
import { decodeMuxRecord, encodeMuxRecord, type MuxRecord } from './mux';
import { decodeRelayControlWithLength, type RelayControlMsg } from './relay-control';
import { decodeRoundFrame, encodeRoundFrame, type RoundFrame } from './round-frame';
import { checkTensorPayload, tensorValues, type TensorEntry } from './tensor';
import { decodeWireMsg, wireMsgToJson, type WireValue } from './wire-msg';

import { elementToJson, unitFromJson, type ParsedUnit } from './units-json-parse';
import type {
  DecodedUnitJson,
  Layer,
  RelayControlJson,
  TensorJson,
  UnitCodecOptions,
  UnitJson,
} from './units-json-types';

export * from './units-json-types';
export * from './units-json-parse';

/** The JSON form of a parsed unit. */
export function unitToJson(unit: ParsedUnit): UnitJson {
  switch (unit.layer) {
    case 'mux':
      return muxRecordToJson(unit.record);
    case 'roundframe':
      return roundFrameToJson(unit.frame);
    case 'controlframe':
      return {
        layer: 'controlframe',
        version: unit.frame.version,
        msgKind: unit.frame.msgKind,
        payload: bytesToHex(unit.frame.payload),
      };
    case 'lenframe':
      return { layer: 'lenframe', blob: bytesToHex(unit.blob) };
    case 'handshake':
      return { ...unit };
  }
}

/** Encodes one JSON unit to its wire bytes. */
export function encodeUnit(json: unknown, mac: Mac, opts: UnitCodecOptions = {}): Uint8Array {
  const unit = unitFromJson(json);
  switch (unit.layer) {
    case 'mux':
      return encodeMuxRecord(unit.record, mac);
    case 'roundframe':
      return encodeRoundFrame(unit.frame, mac);
    case 'controlframe':
      return encodeControlFrame(unit.frame, mac);
    case 'lenframe':
      return encodeLenFrame(unit.blob, opts.ceiling);
    case 'handshake':
      switch (unit.type) {
        case 'data':
          return encodeDataHandshake(unit);
        case 'dataAck':
          return encodeDataAck(unit.version);
        case 'control':
          return encodeControlHandshake(unit, mac);
        case 'controlAck':
          return encodeControlAck(unit.version, mac);
      }
  }
}

// ---------- unit -> JSON ----------

export function relayControlToJson(m: RelayControlMsg): RelayControlJson {
  if (m.type === 'Hello') {
    const j: RelayControlJson = { type: 'Hello', host: m.host, ranks: [...m.ranks] };
    if (m.modelSigs) j.modelSigs = m.modelSigs.map(bytesToHex);
    return j;
  }
  return { ...m };
}

export function muxRecordToJson(r: MuxRecord): UnitJson {
  switch (r.kind) {
    case 'Data':
      return { layer: 'mux', kind: 'Data', rank: r.rank, payload: bytesToHex(r.payload) };
    case 'Control':
      return { layer: 'mux', kind: 'Control', msg: relayControlToJson(r.msg) };
    default:
      return { layer: 'mux', kind: r.kind, payload: bytesToHex(r.payload) };
  }
}

export function tensorToJson(t: TensorEntry, ceiling?: number): TensorJson {
  checkTensorPayload(t);
  const dtype = t.dtype === DTYPE_BF16 ? 'bf16' : 'f32';
  if (t.data === null) return { dtype, dims: [...t.dims], elided: true };
  return { dtype, dims: [...t.dims], data: Array.from(tensorValues(t, ceiling), elementToJson) };
}

export function roundFrameToJson(f: RoundFrame, ceiling?: number): UnitJson {
  return {
    layer: 'roundframe',
    roundKind: f.roundKind === ROUND_KIND_CONTROL ? 'Control' : 'Model',
    weight: f.weight,
    tensors: f.tensors.map((t) => tensorToJson(t, ceiling)),
  };
}

/** The handshake type a unit's magic names (for decoding without being told). */
function handshakeTypeOf(bytes: Uint8Array): 'data' | 'dataAck' | 'control' | 'controlAck' {
  if (bytes.length < 4)
    throw new WireError('TRUNCATED', `handshake needs at least 4 bytes, got ${bytes.length}`);
  const m = new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true);
  if (m === HANDSHAKE_MAGIC_RANK) return 'data';
  if (m === HANDSHAKE_MAGIC_CONTROLLER_ACK) return 'dataAck';
  if (m === CONTROL_HANDSHAKE_MAGIC_RANK) return 'control';
  if (m === CONTROL_HANDSHAKE_MAGIC_ACK) return 'controlAck';
  const ch = channelOfMagic(bytes.subarray(0, 4));
  throw new WireError(
    'BAD_MAGIC',
    `0x${m.toString(16).padStart(8, '0')} is not a handshake magic${ch ? ` (it is the ${ch} channel magic)` : ''}`,
  );
}

/**
 * Decodes one whole unit of `layer` to its JSON form plus `tag` (where the
 * unit has one). Throws WireError on rejection.
 */
export function decodeUnit(
  layer: Layer,
  bytes: Uint8Array,
  mac: Mac,
  opts: UnitCodecOptions = {},
): Record<string, unknown> {
  switch (layer) {
    case 'mux': {
      const rec = decodeMuxRecord(bytes, mac, { ceiling: opts.ceiling });
      const out: Record<string, unknown> = {
        ...muxRecordToJson(rec),
        tag: bytesToHex(bytes.subarray(17, MUX_HEADER_LEN)),
      };
      if (rec.kind === 'Control') {
        const payload = bytes.subarray(MUX_HEADER_LEN);
        const extra = payload.length - decodeRelayControlWithLength(payload).used;
        if (extra > 0)
          out.notes = [`${extra} bytes after the RelayControlMsg: ignored, as flodl's decode ignores them`];
      }
      return out;
    }
    case 'roundframe': {
      // flodl parses a RoundFrame off a blob or a HostFrame/Broadcast payload and never looks past the footer.
      const f = decodeRoundFrame(bytes, mac, { ceiling: opts.ceiling, trailing: 'ignore' });
      const out: Record<string, unknown> = { ...roundFrameToJson(f, opts.ceiling), tag: bytesToHex(f.tag) };
      if (f.trailing > 0) {
        out.trailingBytes = f.trailing;
        out.notes = [roundFrameTrailingNote(f.trailing)];
      }
      return out;
    }
    case 'controlframe': {
      const f = decodeControlFrame(bytes, mac, { version: opts.controlVersion });
      const out: Record<string, unknown> = {
        layer,
        version: f.version,
        msgKind: f.msgKind,
        payload: bytesToHex(f.payload),
        tag: bytesToHex(f.tag),
      };
      // Extra fields for readers (CLI.md allows more): the message of a Control/Timing frame under the index table.
      const table = opts.indexTable ?? DEFAULT_CONTROL_INDEX_TABLE;
      const m = controlPayloadDecode(f.msgKind, f.payload, table);
      if (m) {
        out.indexTable = table;
        if ('error' in m) {
          out.msgError = m.error;
          if (m.flodlMessage) out.msgFlodlMessage = m.flodlMessage;
        } else {
          out.msg = m.msg;
          if (m.notes.length) out.notes = m.notes;
        }
      }
      return out;
    }
    case 'lenframe':
      return { layer, blob: bytesToHex(decodeLenFrame(bytes, { ceiling: opts.ceiling })) };
    case 'handshake': {
      const type = handshakeTypeOf(bytes);
      switch (type) {
        case 'data':
          return { layer, type, ...decodeDataHandshake(bytes) };
        case 'dataAck':
          return { layer, type, ...decodeDataAck(bytes) };
        case 'control': {
          const h = decodeControlHandshake(bytes, mac);
          return {
            layer,
            type,
            version: h.version,
            rank: h.rank,
            worldSize: h.worldSize,
            tag: bytesToHex(h.tag),
          };
        }
        case 'controlAck': {
          const h = decodeControlAck(bytes, mac);
          return { layer, type, version: h.version, tag: bytesToHex(h.tag) };
        }
      }
    }
  }
  throw new WireError('BAD_PAYLOAD', `unknown layer ${String(layer)}`);
}

/** The note for bytes after a RoundFrame footer (issue 16 item 6). */
export function roundFrameTrailingNote(n: number): string {
  return `${n} bytes after the RoundFrame footer: ignored by flodl's relay and controller (RoundFrame::read_from stops at the footer); a rank's streamed read of a len-framed reply would reject them ("consumed ${n} bytes fewer than its length prefix declared")`;
}

/**
 * The message of a Control (ControlMsgWire) or Timing (TimingMsgWire) frame
 * payload under `table`, as JSON with notes (trailing bytes, fields whose
 * type WIRE.md does not give), or its bincode error; null for other kinds.
 */
export function controlPayloadDecode(
  msgKind: number,
  payload: Uint8Array,
  table: ControlIndexTable = DEFAULT_CONTROL_INDEX_TABLE,
): { msg: Record<string, WireValue>; notes: string[] } | { error: string; flodlMessage?: string } | null {
  const family =
    msgKind === MSG_KIND_CONTROL ? 'ControlMsgWire' : msgKind === MSG_KIND_TIMING ? 'TimingMsgWire' : null;
  if (!family) return null;
  try {
    const m = decodeWireMsg(family, payload, table);
    const notes: string[] = [];
    if (m.undecoded) notes.push(`${m.name}.${m.undecoded.field}: ${m.undecoded.note}`);
    for (const f of m.fields) if (f.type === 'uint?') notes.push(`${m.name}.${f.name}: ${f.note}`);
    if (m.trailing > 0)
      notes.push(
        `${m.trailing} bytes after the ${family} ${m.name}: ignored, as flodl's decode ignores them`,
      );
    return { msg: wireMsgToJson(m, payload), notes };
  } catch (e) {
    if (!isWireError(e)) throw e;
    return { error: e.message, flodlMessage: e.flodlMessage };
  }
}

/** The decoded message of a ControlFrame payload as JSON, or null (not a Control/Timing kind, or undecodable). */
export function controlPayloadMessage(
  msgKind: number,
  payload: Uint8Array,
  table: ControlIndexTable = DEFAULT_CONTROL_INDEX_TABLE,
): Record<string, WireValue> | null {
  const m = controlPayloadDecode(msgKind, payload, table);
  return m && 'msg' in m ? m.msg : null;
}

/** decodeUnit with the verdict fields of CLI.md: never throws for bad bytes. */
export function decodeUnitVerdict(
  layer: Layer,
  bytes: Uint8Array,
  mac: Mac,
  opts: UnitCodecOptions = {},
): DecodedUnitJson {
  try {
    return { ...decodeUnit(layer, bytes, mac, opts), layer, verdict: 'ok' };
  } catch (e) {
    if (!isWireError(e)) throw e;
    const out: DecodedUnitJson = { layer, verdict: 'error', code: e.code, message: e.message };
    if (e.flodlMessage) out.flodlMessage = e.flodlMessage;
    return out;
  }
}
