// Schema-driven decoder of every ControlMsgWire / TimingMsgWire variant of a
// chosen index table (control-msg-tables.ts), with bincode 2's exact rules
// (bincode.ts). It reports each field with its byte offset (for the
// dissector), what it could not decode and why, and the bytes after the
// message: flodl's decode ignores them (`decode_from_slice` returns the count
// and the caller drops it), so they are information, not an error.
import { BincodeReader, unknownVariantError } from './bincode';
import { bytesToHex } from './bytes';
import {
  DEFAULT_CONTROL_INDEX_TABLE,
  EPOCH_PLAN_FIELDS,
  MSG_TABLES,
  type ControlIndexTable,
  type FieldSpec,
  type MsgFamily,
} from './control-msg-tables';

export type WireValue = number | string | boolean | null | { [k: string]: WireValue };

export interface WireMsgField {
  name: string;
  type: FieldSpec['type'];
  value: WireValue;
  offset: number;
  length: number;
  note?: string;
}

export interface DecodedWireMsg {
  family: MsgFamily;
  table: ControlIndexTable;
  index: number;
  name: string;
  fields: WireMsgField[];
  /** Bytes the message took (what bincode's decode_from_slice reports). */
  used: number;
  /** Set when a field's type is not given (WIRE.md 3.5): the bytes from `offset` on were not decoded. */
  undecoded?: { field: string; offset: number; length: number; note: string };
  /** Bytes after the message: ignored by flodl's decode (shown as information). */
  trailing: number;
}

/** A u64 as a JSON-safe value: a number when exact, else its decimal string. */
function u64Value(v: bigint): number | string {
  return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
}

function readPlan(r: BincodeReader): { [k: string]: WireValue } {
  const plan: { [k: string]: WireValue } = {};
  for (const k of EPOCH_PLAN_FIELDS) plan[camel(k)] = u64Value(r.u64());
  return plan;
}

function readField(r: BincodeReader, spec: FieldSpec): WireValue {
  switch (spec.type) {
    case 'u8':
      return r.u8();
    case 'u16':
      return r.u16();
    case 'u32':
      return r.u32();
    case 'u64':
    case 'uint?':
      return u64Value(r.u64());
    case 'f64':
      return floatValue(r.f64());
    case 'bytes':
      return bytesToHex(Uint8Array.from(r.vec((r) => r.u8())));
    case 'optF64':
      return r.option((r) => floatValue(r.f64()));
    case 'plan':
      return readPlan(r);
    case 'optPlan':
      return r.option(readPlan);
    case 'opaque':
      return null;
  }
}

/** f64 values JSON cannot carry are written as strings, as elsewhere in the lab. */
function floatValue(x: number): number | string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (Object.is(x, -0)) return '-0';
  return x;
}

/**
 * Decodes one message of `family` under `table`. Throws a BincodeError
 * (BAD_PAYLOAD, bincode's own text in `bincode`/`flodlMessage`) where
 * bincode would fail; an index the table does not have is serde's
 * "invalid value: integer `N`, expected variant index 0 <= i < M".
 */
export function decodeWireMsg(
  family: MsgFamily,
  payload: Uint8Array,
  table: ControlIndexTable = DEFAULT_CONTROL_INDEX_TABLE,
): DecodedWireMsg {
  const specs = MSG_TABLES[table][family];
  const r = new BincodeReader(payload);
  const index = r.variant();
  const spec = specs[index];
  if (!spec) throw unknownVariantError(index, specs.length, family);
  const fields: WireMsgField[] = [];
  let undecoded: DecodedWireMsg['undecoded'];
  for (const fs of spec.fields) {
    if (fs.type === 'opaque') {
      undecoded = { field: fs.name, offset: r.offset, length: r.remaining, note: fs.note ?? '' };
      break;
    }
    const at = r.offset;
    const value = readField(r, fs);
    fields.push({ name: fs.name, type: fs.type, value, offset: at, length: r.offset - at, note: fs.note });
  }
  const used = undecoded ? payload.length : r.offset;
  return { family, table, index, name: spec.name, fields, used, undecoded, trailing: payload.length - used };
}

/** camelCase of a wire field name (JSON form). */
export function camel(name: string): string {
  return name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The JSON form: `{type, ...fields}` (camelCase), plus `undecoded` (hex) and `undecodedNote` where the type is not given. */
export function wireMsgToJson(m: DecodedWireMsg, payload: Uint8Array): Record<string, WireValue> {
  const out: Record<string, WireValue> = { type: m.name };
  for (const f of m.fields) {
    if (f.type === 'plan' && f.value && typeof f.value === 'object') {
      for (const [k, val] of Object.entries(f.value)) out[camel(k)] = val;
    } else out[camel(f.name)] = f.value;
  }
  if (m.undecoded) {
    out.undecoded = bytesToHex(payload.subarray(m.undecoded.offset, m.undecoded.offset + m.undecoded.length));
    out.undecodedNote = `${m.undecoded.field}: ${m.undecoded.note}`;
  }
  return out;
}
