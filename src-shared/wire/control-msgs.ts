// Payload codecs of the ControlFrame messages the lab acts on (WIRE.md 3.5):
// ControlMsgWire (coordinator -> rank) and TimingMsgWire (rank -> coordinator),
// typed, under a chosen index table (ControlIndexTable; v2 by default). Every
// other variant of the table decodes too, as `{type: 'Other', name, fields}`
// (wire-msg.ts has the generic form). Bytes after a message are ignored, as
// flodl's decode ignores them. u64 fields are varints kept as JS numbers
// (safe integers); f64 fields are fixed 8 bytes.
import { BincodeWriter } from './bincode';
import {
  DEFAULT_CONTROL_INDEX_TABLE,
  variantIndex,
  type ControlIndexTable,
  type MsgFamily,
} from './control-msg-tables';
import { WireError } from './errors';
import { decodeWireMsg, type DecodedWireMsg, type WireValue } from './wire-msg';

export interface ControlMsgOptions {
  /** The session's index table (default v2). */
  indexTable?: ControlIndexTable;
}

/** A variant of the table the lab does not act on: its name and fields as decoded. */
export interface OtherMsg {
  type: 'Other';
  name: string;
  index: number;
  fields: Record<string, WireValue>;
}

export interface EpochPlan {
  epoch: number;
  partitionOffset: number;
  partitionSize: number;
}

export type ControlMsg =
  | { type: 'RequestParams' }
  | { type: 'Update'; version: number; nextPlan: EpochPlan | null }
  | { type: 'SyncNow' }
  | ({ type: 'StartEpoch' } & EpochPlan)
  | { type: 'ExtendPartition'; partitionOffset: number; partitionSize: number }
  | { type: 'DeclareDead'; rank: number }
  | { type: 'Throttle' }
  | { type: 'SetGlobalStep'; globalStep: number }
  | { type: 'Shutdown' }
  | { type: 'ShutdownWithSave'; reason: number }
  | OtherMsg;

type LabControlMsg = Exclude<ControlMsg, OtherMsg>;

/** v2 (`000254b`) ControlMsgWire indices. */
export const CONTROL_MSG_INDEX_V2 = {
  RequestParams: 0,
  Update: 1,
  SyncNow: 2,
  StartEpoch: 3,
  ExtendPartition: 4,
  DeclareDead: 5,
  Throttle: 8,
  SetGlobalStep: 9,
  Shutdown: 13,
  ShutdownWithSave: 14,
} as const satisfies Record<LabControlMsg['type'], number>;

/** Index of a lab message in the table; encoding a variant the table lacks is BAD_PAYLOAD. */
function indexOf(table: ControlIndexTable, family: MsgFamily, name: string): number {
  const i = variantIndex(table, family, name);
  if (i < 0) throw new WireError('BAD_PAYLOAD', `${family} table ${table} has no variant ${name}`);
  return i;
}

function writePlan(w: BincodeWriter, p: EpochPlan): void {
  w.varint(p.epoch).varint(p.partitionOffset).varint(p.partitionSize);
}

export function encodeControlMsg(msg: ControlMsg, opts: ControlMsgOptions = {}): Uint8Array {
  if (msg.type === 'Other')
    throw new WireError('BAD_PAYLOAD', `the lab does not encode ControlMsgWire ${msg.name}`);
  const table = opts.indexTable ?? DEFAULT_CONTROL_INDEX_TABLE;
  const w = new BincodeWriter().varint(indexOf(table, 'ControlMsgWire', msg.type));
  switch (msg.type) {
    case 'Update':
      w.varint(msg.version).option(msg.nextPlan, writePlan);
      break;
    case 'StartEpoch':
      writePlan(w, msg);
      break;
    case 'ExtendPartition':
      w.varint(msg.partitionOffset).varint(msg.partitionSize);
      break;
    case 'DeclareDead':
      w.varint(msg.rank);
      break;
    case 'SetGlobalStep':
      w.varint(msg.globalStep);
      break;
    case 'ShutdownWithSave':
      w.u8(msg.reason);
      break;
    default:
      break;
  }
  return w.finish();
}

/** A decoded field as a lab number (the lab keeps u64 as safe integers). */
function num(m: DecodedWireMsg, name: string): number {
  const f = m.fields.find((x) => x.name === name);
  if (!f || typeof f.value !== 'number')
    throw new WireError('BAD_PAYLOAD', `${m.family} ${m.name}.${name} is not a safe integer (a lab limit)`);
  return f.value;
}

function fnum(m: DecodedWireMsg, name: string): number {
  const v = m.fields.find((x) => x.name === name)?.value;
  return typeof v === 'number' ? v : Number(v);
}

function optNum(m: DecodedWireMsg, name: string): number | null {
  const v = m.fields.find((x) => x.name === name)?.value;
  return v === null || v === undefined ? null : typeof v === 'number' ? v : Number(v);
}

function planOf(v: WireValue | undefined): EpochPlan | null {
  if (!v || typeof v !== 'object') return null;
  const n = (x: WireValue) => (typeof x === 'number' ? x : Number(x));
  return { epoch: n(v.epoch), partitionOffset: n(v.partitionOffset), partitionSize: n(v.partitionSize) };
}

function other(m: DecodedWireMsg): OtherMsg {
  const fields: Record<string, WireValue> = {};
  for (const f of m.fields) fields[f.name] = f.value;
  return { type: 'Other', name: m.name, index: m.index, fields };
}

/** Decodes one ControlMsgWire message; `used` = the bytes it took (the rest is ignored, as flodl does). */
export function decodeControlMsgWithLength(
  payload: Uint8Array,
  opts: ControlMsgOptions = {},
): { msg: ControlMsg; used: number } {
  const m = decodeWireMsg('ControlMsgWire', payload, opts.indexTable);
  let msg: ControlMsg;
  switch (m.name) {
    case 'RequestParams':
    case 'SyncNow':
    case 'Throttle':
    case 'Shutdown':
      msg = { type: m.name };
      break;
    case 'Update':
      msg = { type: 'Update', version: num(m, 'version'), nextPlan: planOf(m.fields[1].value) };
      break;
    case 'StartEpoch':
      msg = { type: 'StartEpoch', ...planOf(m.fields[0].value)! };
      break;
    case 'ExtendPartition':
      msg = {
        type: 'ExtendPartition',
        partitionOffset: num(m, 'partition_offset'),
        partitionSize: num(m, 'partition_size'),
      };
      break;
    case 'DeclareDead':
      msg = { type: 'DeclareDead', rank: num(m, 'rank') };
      break;
    case 'SetGlobalStep':
      msg = { type: 'SetGlobalStep', globalStep: num(m, 'global_step') };
      break;
    case 'ShutdownWithSave':
      msg = { type: 'ShutdownWithSave', reason: num(m, 'reason') };
      break;
    default:
      msg = other(m);
  }
  return { msg, used: m.used };
}

export function decodeControlMsg(payload: Uint8Array, opts: ControlMsgOptions = {}): ControlMsg {
  return decodeControlMsgWithLength(payload, opts).msg;
}

export type TimingMsg =
  | {
      type: 'Batch';
      rank: number;
      batchMs: number;
      dataMs: number;
      stepCount: number;
      paramNorm: number | null;
      batchLoss: number;
      syncDivergence: number | null;
    }
  | {
      type: 'SyncAck';
      rank: number;
      stepCount: number;
      divergence: number | null;
      postNorm: number | null;
      preNorm: number | null;
    }
  | { type: 'Exiting'; rank: number }
  | { type: 'LrUpdate'; rank: number; lr: number }
  | { type: 'Heartbeat'; rank: number; stepCount: number }
  | { type: 'SnapshotReady'; rank: number }
  | (OtherMsg & { rank: number });

type LabTimingMsg = Exclude<TimingMsg, OtherMsg>;

/** v2 TimingMsgWire indices (Heartbeat is 5 in the later table, after Intent). */
export const TIMING_MSG_INDEX_V2 = {
  Batch: 0,
  SyncAck: 1,
  Exiting: 2,
  LrUpdate: 3,
  Heartbeat: 4,
  SnapshotReady: 5,
} as const satisfies Record<LabTimingMsg['type'], number>;

const optF64 = (w: BincodeWriter, v: number | null) => w.option(v, (w, x) => w.f64(x));

export function encodeTimingMsg(msg: TimingMsg, opts: ControlMsgOptions = {}): Uint8Array {
  if (msg.type === 'Other')
    throw new WireError('BAD_PAYLOAD', `the lab does not encode TimingMsgWire ${msg.name}`);
  const table = opts.indexTable ?? DEFAULT_CONTROL_INDEX_TABLE;
  const w = new BincodeWriter().varint(indexOf(table, 'TimingMsgWire', msg.type)).varint(msg.rank);
  switch (msg.type) {
    case 'Batch':
      w.f64(msg.batchMs).f64(msg.dataMs).varint(msg.stepCount);
      optF64(w, msg.paramNorm);
      w.f64(msg.batchLoss);
      optF64(w, msg.syncDivergence);
      break;
    case 'SyncAck':
      w.varint(msg.stepCount);
      optF64(w, msg.divergence);
      optF64(w, msg.postNorm);
      optF64(w, msg.preNorm);
      break;
    case 'LrUpdate':
      w.f64(msg.lr);
      break;
    case 'Heartbeat':
      w.varint(msg.stepCount);
      break;
    default:
      break;
  }
  return w.finish();
}

/** Decodes one TimingMsgWire message; `used` = the bytes it took (the rest is ignored, as flodl does). */
export function decodeTimingMsgWithLength(
  payload: Uint8Array,
  opts: ControlMsgOptions = {},
): { msg: TimingMsg; used: number } {
  const m = decodeWireMsg('TimingMsgWire', payload, opts.indexTable);
  const rank = num(m, 'rank');
  let msg: TimingMsg;
  switch (m.name) {
    case 'Batch':
      msg = {
        type: 'Batch',
        rank,
        batchMs: fnum(m, 'batch_ms'),
        dataMs: fnum(m, 'data_ms'),
        stepCount: num(m, 'step_count'),
        paramNorm: optNum(m, 'param_norm'),
        batchLoss: fnum(m, 'batch_loss'),
        syncDivergence: optNum(m, 'sync_divergence'),
      };
      break;
    case 'SyncAck':
      msg = {
        type: 'SyncAck',
        rank,
        stepCount: num(m, 'step_count'),
        divergence: optNum(m, 'divergence'),
        postNorm: optNum(m, 'post_norm'),
        preNorm: optNum(m, 'pre_norm'),
      };
      break;
    case 'Exiting':
    case 'SnapshotReady':
      msg = { type: m.name, rank };
      break;
    case 'LrUpdate':
      msg = { type: 'LrUpdate', rank, lr: fnum(m, 'lr') };
      break;
    case 'Heartbeat':
      msg = { type: 'Heartbeat', rank, stepCount: num(m, 'step_count') };
      break;
    default:
      msg = { ...other(m), rank };
  }
  return { msg, used: m.used };
}

export function decodeTimingMsg(payload: Uint8Array, opts: ControlMsgOptions = {}): TimingMsg {
  return decodeTimingMsgWithLength(payload, opts).msg;
}
