// JSON -> unit: parses and checks one JSON unit of CLI.md section 1 (bad
// input is BAD_PAYLOAD with a message naming the field). Element values
// "NaN", "Infinity", "-Infinity" and "-0" stand for what JSON numbers cannot carry.
import { hexToBytes } from './bytes';
import { DTYPE_BF16, DTYPE_F32, ROUND_KIND_CONTROL, ROUND_KIND_MODEL } from './constants';
import type { ControlFrame } from './control-frame';
import { WireError } from './errors';
import type { MuxRecord } from './mux';
import type { RelayControlMsg } from './relay-control';
import type { RoundFrame } from './round-frame';
import { elidedTensor, tensorFromValues, type TensorEntry } from './tensor';
import { LAYERS, type ElementJson } from './units-json-types';

// ---------- JSON validation helpers (bad JSON input is BAD_PAYLOAD) ----------

type Obj = Record<string, unknown>;

function bad(msg: string): never {
  throw new WireError('BAD_PAYLOAD', msg);
}

function obj(v: unknown, what: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) bad(`${what} must be a JSON object`);
  return v as Obj;
}

function uint(o: Obj, key: string, max = 0xffff_ffff): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max)
    bad(`'${key}' must be a whole number between 0 and ${max}`);
  return v;
}

function str(o: Obj, key: string): string {
  const v = o[key];
  if (typeof v !== 'string') bad(`'${key}' must be a string`);
  return v;
}

function hexField(o: Obj, key: string): Uint8Array {
  return hexToBytes(str(o, key));
}

function uintList(o: Obj, key: string): number[] {
  const v = o[key];
  if (!Array.isArray(v)) bad(`'${key}' must be a list of whole numbers`);
  return v.map((x, i) => uint({ [`${key}[${i}]`]: x }, `${key}[${i}]`));
}

function element(v: unknown, where: string): number {
  if (typeof v === 'number') return v;
  switch (v) {
    case 'NaN':
      return NaN;
    case 'Infinity':
      return Infinity;
    case '-Infinity':
      return -Infinity;
    case '-0':
      return -0;
    default:
      return bad(`${where} must be a number (or "NaN", "Infinity", "-Infinity", "-0")`);
  }
}

export function elementToJson(v: number): ElementJson {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  if (Object.is(v, -0)) return '-0';
  return v;
}

// ---------- JSON -> unit ----------

function relayControlFromJson(v: unknown): RelayControlMsg {
  const m = obj(v, "'msg'");
  switch (m.type) {
    case 'Hello': {
      const msg: RelayControlMsg = { type: 'Hello', host: str(m, 'host'), ranks: uintList(m, 'ranks') };
      if (m.modelSigs !== undefined) {
        if (!Array.isArray(m.modelSigs)) bad("'modelSigs' must be a list of hex strings");
        msg.modelSigs = m.modelSigs.map((s, i) =>
          typeof s === 'string' ? hexToBytes(s) : bad(`modelSigs[${i}] must be a hex string`),
        );
      }
      return msg;
    }
    case 'HelloAck':
      return { type: 'HelloAck' };
    case 'RankExit':
    case 'DeclareDead':
      return { type: m.type, rank: uint(m, 'rank') };
    default:
      return bad(
        `'msg.type' must be Hello, HelloAck, RankExit or DeclareDead, got ${JSON.stringify(m.type)}`,
      );
  }
}

export function muxRecordFromJson(u: Obj): MuxRecord {
  switch (u.kind) {
    case 'Data':
      return { kind: 'Data', rank: uint(u, 'rank'), payload: hexField(u, 'payload') };
    case 'Control':
      return { kind: 'Control', msg: relayControlFromJson(u.msg) };
    case 'HostFrame':
    case 'Broadcast':
      return { kind: u.kind, payload: hexField(u, 'payload') };
    default:
      return bad(`'kind' must be Data, Control, HostFrame or Broadcast, got ${JSON.stringify(u.kind)}`);
  }
}

function dtypeFromJson(v: unknown): number {
  if (v === 'f32') return DTYPE_F32;
  if (v === 'bf16') return DTYPE_BF16;
  return bad(`tensor 'dtype' must be "f32" or "bf16", got ${JSON.stringify(v)}`);
}

export function roundFrameFromJson(u: Obj): RoundFrame {
  const roundKind =
    u.roundKind === 'Model'
      ? ROUND_KIND_MODEL
      : u.roundKind === 'Control'
        ? ROUND_KIND_CONTROL
        : bad(`'roundKind' must be "Model" or "Control"`);
  const weight = typeof u.weight === 'number' ? u.weight : bad("'weight' must be a number");
  if (!Array.isArray(u.tensors)) bad("'tensors' must be a list");
  const tensors: TensorEntry[] = u.tensors.map((tv, i) => {
    const t = obj(tv, `tensors[${i}]`);
    const dtype = dtypeFromJson(t.dtype);
    const dims = uintList(t, 'dims');
    if (t.elided === true) return elidedTensor(dtype, dims);
    if (!Array.isArray(t.data)) bad(`tensors[${i}] needs 'data' (a list of numbers) or 'elided': true`);
    const values = t.data.map((x, j) => element(x, `tensors[${i}].data[${j}]`));
    return tensorFromValues(dtype, dims, values);
  });
  return { roundKind, weight, tensors };
}

/** A unit as codec values (the JSON form parsed and checked). */
export type ParsedUnit =
  | { layer: 'mux'; record: MuxRecord }
  | { layer: 'roundframe'; frame: RoundFrame }
  | { layer: 'controlframe'; frame: ControlFrame }
  | { layer: 'lenframe'; blob: Uint8Array }
  | { layer: 'handshake'; type: 'data' | 'control'; version: number; rank: number; worldSize: number }
  | { layer: 'handshake'; type: 'dataAck' | 'controlAck'; version: number };

/** Parses and checks a JSON unit (BAD_PAYLOAD with a message naming the field on bad input). */
export function unitFromJson(json: unknown): ParsedUnit {
  const u = obj(json, 'the unit');
  switch (u.layer) {
    case 'mux':
      return { layer: 'mux', record: muxRecordFromJson(u) };
    case 'roundframe':
      return { layer: 'roundframe', frame: roundFrameFromJson(u) };
    case 'controlframe':
      return {
        layer: 'controlframe',
        frame: { version: uint(u, 'version'), msgKind: uint(u, 'msgKind'), payload: hexField(u, 'payload') },
      };
    case 'lenframe':
      return { layer: 'lenframe', blob: hexField(u, 'blob') };
    case 'handshake': {
      const version = uint(u, 'version');
      if (u.type === 'data' || u.type === 'control')
        return {
          layer: 'handshake',
          type: u.type,
          version,
          rank: uint(u, 'rank'),
          worldSize: uint(u, 'worldSize'),
        };
      if (u.type === 'dataAck' || u.type === 'controlAck')
        return { layer: 'handshake', type: u.type, version };
      return bad(
        `handshake 'type' must be data, dataAck, control or controlAck, got ${JSON.stringify(u.type)}`,
      );
    }
    default:
      return bad(`'layer' must be one of ${LAYERS.join(', ')}, got ${JSON.stringify(u.layer)}`);
  }
}
