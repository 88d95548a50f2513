// Payload codecs of the ControlFrame messages the lab uses (WIRE.md 3.5),
// with control protocol v2 variant indices: ControlMsgWire (coordinator ->
// rank) and TimingMsgWire (rank -> coordinator). u64/usize fields are varints
// kept as JS numbers (safe integers); f64 fields are fixed 8 bytes.
import { BincodeReader, BincodeWriter } from './bincode';
import { WireError } from './errors';

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
  | { type: 'ShutdownWithSave'; reason: number };

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
} as const satisfies Record<ControlMsg['type'], number>;

function writePlan(w: BincodeWriter, p: EpochPlan): void {
  w.varint(p.epoch).varint(p.partitionOffset).varint(p.partitionSize);
}

function readPlan(r: BincodeReader): EpochPlan {
  return { epoch: r.varintU64(), partitionOffset: r.varintU64(), partitionSize: r.varintU64() };
}

export function encodeControlMsg(msg: ControlMsg): Uint8Array {
  const w = new BincodeWriter().varint(CONTROL_MSG_INDEX_V2[msg.type]);
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

export function decodeControlMsg(payload: Uint8Array): ControlMsg {
  const r = new BincodeReader(payload);
  const idx = r.varint();
  let msg: ControlMsg;
  switch (idx) {
    case 0:
      msg = { type: 'RequestParams' };
      break;
    case 1:
      msg = { type: 'Update', version: r.varintU64(), nextPlan: r.option(readPlan) };
      break;
    case 2:
      msg = { type: 'SyncNow' };
      break;
    case 3:
      msg = { type: 'StartEpoch', ...readPlan(r) };
      break;
    case 4:
      msg = { type: 'ExtendPartition', partitionOffset: r.varintU64(), partitionSize: r.varintU64() };
      break;
    case 5:
      msg = { type: 'DeclareDead', rank: r.varintU64() };
      break;
    case 8:
      msg = { type: 'Throttle' };
      break;
    case 9:
      msg = { type: 'SetGlobalStep', globalStep: r.varintU64() };
      break;
    case 13:
      msg = { type: 'Shutdown' };
      break;
    case 14:
      msg = { type: 'ShutdownWithSave', reason: r.u8() };
      break;
    default:
      throw new WireError(
        'BAD_PAYLOAD',
        `ControlMsgWire variant ${idx} is not one the lab decodes (v2 indices)`,
      );
  }
  if (r.remaining > 0)
    throw new WireError('TRAILING_BYTES', `${r.remaining} bytes after the ControlMsgWire ${msg.type}`);
  return msg;
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
  | { type: 'SnapshotReady'; rank: number };

/** v2 TimingMsgWire indices (Heartbeat moved to 5 in v6). */
export const TIMING_MSG_INDEX_V2 = {
  Batch: 0,
  SyncAck: 1,
  Exiting: 2,
  LrUpdate: 3,
  Heartbeat: 4,
  SnapshotReady: 5,
} as const satisfies Record<TimingMsg['type'], number>;

const optF64 = (w: BincodeWriter, v: number | null) => w.option(v, (w, x) => w.f64(x));

export function encodeTimingMsg(msg: TimingMsg): Uint8Array {
  const w = new BincodeWriter().varint(TIMING_MSG_INDEX_V2[msg.type]).varint(msg.rank);
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

export function decodeTimingMsg(payload: Uint8Array): TimingMsg {
  const r = new BincodeReader(payload);
  const idx = r.varint();
  const optF = () => r.option((r) => r.f64());
  let msg: TimingMsg;
  switch (idx) {
    case 0: {
      const rank = r.varintU64();
      const batchMs = r.f64();
      const dataMs = r.f64();
      const stepCount = r.varintU64();
      const paramNorm = optF();
      const batchLoss = r.f64();
      msg = { type: 'Batch', rank, batchMs, dataMs, stepCount, paramNorm, batchLoss, syncDivergence: optF() };
      break;
    }
    case 1: {
      const rank = r.varintU64();
      const stepCount = r.varintU64();
      const divergence = optF();
      const postNorm = optF();
      msg = { type: 'SyncAck', rank, stepCount, divergence, postNorm, preNorm: optF() };
      break;
    }
    case 2:
      msg = { type: 'Exiting', rank: r.varintU64() };
      break;
    case 3:
      msg = { type: 'LrUpdate', rank: r.varintU64(), lr: r.f64() };
      break;
    case 4:
      msg = { type: 'Heartbeat', rank: r.varintU64(), stepCount: r.varintU64() };
      break;
    case 5:
      msg = { type: 'SnapshotReady', rank: r.varintU64() };
      break;
    default:
      throw new WireError(
        'BAD_PAYLOAD',
        `TimingMsgWire variant ${idx} is not one the lab decodes (v2 indices)`,
      );
  }
  if (r.remaining > 0)
    throw new WireError('TRAILING_BYTES', `${r.remaining} bytes after the TimingMsgWire ${msg.type}`);
  return msg;
}
