// A rank: data and control handshakes, heartbeats, and per round one
// RoundFrame of deterministic synthetic tensors pre-scaled by its mass (elided
// when the mass is 0); it reads the consensus and adopts it (WIRE.md 4.6).
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { nodeMac } from '../crypto/node-mac';
import { connectWithRetry } from '../engine/conn';
import { ReusedReads } from '../engine/reused-reads';
import { modelLayout, rankMass, dtypeCode } from '@shared/synthetic';
import { checkAdoption, sampleIndices } from '@shared/verdict';
import { encodeChannelMagic } from '@shared/wire/channel';
import {
  CONTROL_ACK_LEN,
  DATA_ACK_LEN,
  DTYPE_F32,
  ROUND_KIND_MODEL,
  deriveFrameCeiling,
} from '@shared/wire/constants';
import { encodeControlFrame, MSG_KIND_TIMING } from '@shared/wire/control-frame';
import { encodeTimingMsg, type TimingMsg } from '@shared/wire/control-msgs';
import {
  decodeControlAck,
  decodeDataAck,
  encodeControlHandshake,
  encodeDataHandshake,
} from '@shared/wire/handshake';
import type { Mac } from '@shared/wire/mac';
import { decodeRoundFrame, encodeRoundFrameChunks, type RoundFrame } from '@shared/wire/round-frame';
import { saltFromHex } from '@shared/wire/salt';
import { bf16BitsToF32, checkTensorPayload, type TensorEntry } from '@shared/wire/tensor';
import { RankCommands } from './rank-commands';
import { RankGradient, type Gradient } from './rank-gradient';
import { RankLink } from './rank-link';
import { encodeSamples } from './samples';
import type { ParentToRank, RankSpec, RankToParent } from './spec';

export interface RankRoundResult {
  round: number;
  weight: number;
  verdict: 'ok' | 'mismatch' | 'unchecked';
}

export interface RankResult {
  rank: number;
  roundsCompleted: number;
  rounds: RankRoundResult[];
  verdict: 'ok' | 'mismatch' | 'error';
  error?: string;
}

/** What a rank keeps for its rounds: its links, its spec's derived constants and its report. */
interface RankState {
  spec: RankSpec;
  mac: Mac;
  ceiling: number;
  dtype: number;
  samples: number[];
  sampled: Float32Array;
  data: RankLink;
  control: RankLink;
  commands: RankCommands;
  gradients: RankGradient;
  report: (m: RankToParent) => void;
  result: RankResult;
  /** A lab rank takes the parent's round-end cue (rank-readiness.ts says why). */
  cued: boolean;
  /** The rank's steps (rounds adopted), as its heartbeats and Timing frames say. */
  step: number;
}

export async function runRank(
  spec: RankSpec,
  report: (m: RankToParent) => void = () => {},
  /** Subscribes to the parent's messages (a lab rank over IPC); without it the rank takes no cues. */
  fromParent?: (listener: (m: ParentToRank) => void) => void,
): Promise<RankResult> {
  const mac = nodeMac(saltFromHex(spec.saltHex));
  const layout = modelLayout(spec.modelBytes, spec.shapes);
  const ceiling = deriveFrameCeiling(layout.numel * 4);
  const dtype = dtypeCode(spec.dtype);
  const samples = sampleIndices(layout.numel, spec.sampleMax);
  const { data, control } = await openLinks(spec, mac, ceiling);
  const st: RankState = {
    spec,
    mac,
    ceiling,
    dtype,
    samples,
    sampled: new Float32Array(samples.length),
    data,
    control,
    commands: new RankCommands(spec, mac, control, fromParent),
    gradients: new RankGradient(spec, layout, dtype),
    report,
    result: { rank: spec.rank, roundsCompleted: 0, rounds: [], verdict: 'ok' },
    // A lab rank makes its next gradient once the parent says the round is over for every rank
    // (ParentToRank roundEnd), then says so (RankToParent prepared): made at once after its own
    // adoption, it took a core from the ranks still receiving the consensus, and the driver
    // sends SyncNow only to ranks that are ready, so neither round pays for the generator.
    cued: spec.report === 'ipc' && spec.paced && fromParent !== undefined,
    step: 0,
  };
  const result = st.result;
  const heartbeat = setInterval(
    () => sendTiming(st, { type: 'Heartbeat', rank: spec.rank, stepCount: st.step }),
    spec.heartbeatMs,
  );
  sendTiming(st, { type: 'Heartbeat', rank: spec.rank, stepCount: 0 });
  report({ type: 'ready', rank: spec.rank, pid: process.pid });
  let prepared = prepare(st, 0);

  try {
    // The loop stays small (each round's work is in runRound): V8 optimizes a function that runs
    // hot, and this one whole took its compiler about 145 ms of CPU, twice, in every rank.
    for (let round = 0; spec.rounds === 0 || round < spec.rounds; round++) {
      if (spec.paced && (await st.commands.next()) === 'shutdown') {
        if (st.commands.error) throw new Error(st.commands.error);
        break;
      }
      const frame = prepared?.round === round ? prepared : signedFrame(st, st.gradients.make(round));
      await runRound(st, frame);
      prepared = prepare(st, round + 1);
    }
    if (result.rounds.some((r) => r.verdict === 'mismatch')) result.verdict = 'mismatch';
  } catch (e) {
    result.verdict = 'error';
    result.error = (e as Error).message;
    report({ type: 'error', rank: spec.rank, message: (e as Error).message });
  } finally {
    clearInterval(heartbeat);
    if (!control.failed) sendTiming(st, { type: 'Exiting', rank: spec.rank });
    await Promise.race([
      Promise.all([control.close(), data.close()]),
      new Promise((r) => setTimeout(r, 1000)),
    ]);
    control.conn.destroy();
    data.conn.destroy();
  }
  report({ type: 'done', rank: spec.rank, roundsCompleted: result.roundsCompleted });
  return result;
}

/** The data link, then the control link (WIRE.md 4.2: the relay accepts both concurrently), handshaken. */
async function openLinks(
  spec: RankSpec,
  mac: Mac,
  ceiling: number,
): Promise<{ data: RankLink; control: RankLink }> {
  const connectOpts = { attempts: 150, intervalMs: 200 };
  // The consensus is model-sized: its reads go into one reused buffer (reused-reads.ts).
  const dataReads = new ReusedReads();
  const data = new RankLink(
    await connectWithRetry(spec.address, spec.dataPort, { ...connectOpts, onread: dataReads.onread }),
    ceiling,
    !spec.nagle,
    dataReads,
  );
  if (spec.direct) data.sendRaw(encodeChannelMagic('data'));
  data.sendRaw(
    encodeDataHandshake({ version: spec.dataVersion, rank: spec.rank, worldSize: spec.worldSize }),
  );
  decodeDataAck(await data.readFixed(DATA_ACK_LEN), { version: spec.dataVersion });

  const control = new RankLink(
    await connectWithRetry(spec.address, spec.controlPort, connectOpts),
    16 * 1024 * 1024 + 64,
    !spec.nagle,
  );
  if (spec.direct) control.sendRaw(encodeChannelMagic('control'));
  control.sendRaw(
    encodeControlHandshake({ version: spec.controlVersion, rank: spec.rank, worldSize: spec.worldSize }, mac),
  );
  decodeControlAck(await control.readFixed(CONTROL_ACK_LEN), mac, { version: spec.controlVersion });
  return { data, control };
}

function sendTiming(st: RankState, msg: TimingMsg): void {
  const frame = encodeControlFrame(
    {
      version: st.spec.controlVersion,
      msgKind: MSG_KIND_TIMING,
      payload: encodeTimingMsg(msg, { indexTable: st.spec.controlIndexTable }),
    },
    st.mac,
  );
  void st.control.sendBlob([frame]);
}

/** A round's gradient and its RoundFrame, encoded and signed (tensor data as views of the gradient's buffers). */
interface SignedFrame {
  round: number;
  gradient: Gradient;
  chunks: Uint8Array[];
}

function signedFrame(st: RankState, g: Gradient): SignedFrame {
  const frame = { roundKind: ROUND_KIND_MODEL, weight: g.mass, tensors: g.tensors };
  return { round: g.round, gradient: g, chunks: encodeRoundFrameChunks(frame, st.mac) };
}

/**
 * The next round's gradient, made and signed while the rank waits for SyncNow, as a trainer's
 * backward pass comes before its sync, so a round's time is the transport's and not the
 * generator's. Signed too: the frame depends on nothing SyncNow carries, and its MAC (a
 * model-sized HMAC per rank) otherwise ran on the round's clock, with every rank wanting a core
 * at once.
 */
function prepare(st: RankState, round: number): SignedFrame | null {
  if (st.spec.rounds !== 0 && round >= st.spec.rounds) return null;
  const frame = signedFrame(st, st.gradients.make(round));
  if (st.cued) st.report({ type: 'prepared', rank: st.spec.rank, round });
  return frame;
}

/** One round: the frame up, the consensus back, adopted and reported; then the lab's check of it. */
async function runRound(st: RankState, frame: SignedFrame): Promise<void> {
  const { spec, data, mac } = st;
  const { round, gradient: g } = frame;
  const t0 = performance.now();
  await data.sendBlob(frame.chunks);
  const replyBytes = await data.next();
  // Reuse this round's value buffers only if no write still holds them (a shaped or
  // stalled link can deliver the consensus before the kernel took all of our frame).
  if (!data.conn.writer.flushed) st.gradients.forgetBuffers();
  const reply = decodeRoundFrame(replyBytes, mac, { ceiling: st.ceiling });
  checkReplySchema(reply.tensors, g.tensors);
  st.step++;
  const roundMs = performance.now() - t0;
  // Adopted: a reply with weight > 0 replaces the local state. The round ends with this report.
  st.report({ type: 'adopted', rank: spec.rank, round, weight: reply.weight, ms: roundMs });
  // The rest waits for the round's end for every rank: the lab's check of this adoption, the
  // Timing frames, the next gradient (rank-readiness.ts says why).
  if (st.cued) await st.commands.cue.until(round);
  reportCheck(st, round, reply, replyBytes);
  sendTiming(st, {
    type: 'Batch',
    rank: spec.rank,
    batchMs: roundMs,
    dataMs: 0,
    stepCount: st.step,
    paramNorm: null,
    batchLoss: 0,
    syncDivergence: null,
  });
  sendTiming(st, {
    type: 'SyncAck',
    rank: spec.rank,
    stepCount: st.step,
    divergence: null,
    postNorm: null,
    preNorm: null,
  });
}

/** The lab's check of an adoption (its samples, the SHA-256 of every element) and the standalone self-check. */
function reportCheck(st: RankState, round: number, reply: RoundFrame, replyBytes: Uint8Array): void {
  const { spec, samples } = st;
  const values =
    reply.weight > 0 ? sampleValues(reply.tensors, samples, st.sampled) : st.sampled.subarray(0, 0);
  const nonFinite = countNonFinite(values);
  st.report({
    type: 'checked',
    rank: spec.rank,
    round,
    samples: encodeSamples(values),
    nonFinite,
    // Every element, for the lab's bit-for-bit verdict: the frame's bytes without its footer.
    digest: createHash('sha256')
      .update(replyBytes.subarray(0, replyBytes.length - 8))
      .digest('hex'),
  });
  // Under the lab the parent checks every element bit for bit (the digest above); the sampled
  // self-check is for a rank run on its own (CLI.md 3) and would only cost each round.
  const selfChecks = spec.report !== 'ipc';
  st.result.rounds.push({
    round,
    weight: reply.weight,
    verdict: selfChecks
      ? selfCheck(spec, round, st.dtype, reply.weight, samples, Array.from(values))
      : 'unchecked',
  });
  st.result.roundsCompleted++;
}

/** The consensus has the schema the rank sent (WIRE.md 4.6): same tensors, dtypes, shapes, full or elided payloads. */
function checkReplySchema(got: TensorEntry[], sent: TensorEntry[]): void {
  if (got.length !== sent.length) throw new Error(`consensus has ${got.length} tensors, sent ${sent.length}`);
  got.forEach((t, i) => {
    const s = sent[i];
    if (t.dtype !== s.dtype || t.dims.length !== s.dims.length || t.dims.some((d, k) => d !== s.dims[k])) {
      throw new Error(
        `consensus tensor ${i} is dtype ${t.dtype} [${t.dims}], sent dtype ${s.dtype} [${s.dims}]`,
      );
    }
    checkTensorPayload(t, i);
  });
}

/** Loops live in small functions of their own: V8 compiles those at once, and the caller stays cheap to compile. */
function countNonFinite(values: Float32Array): number {
  let n = 0;
  for (let i = 0; i < values.length; i++) if (!Number.isFinite(values[i])) n++;
  return n;
}

/** Reads the sampled elements straight from the reply's bytes into `out` (no model-sized decode). */
function sampleValues(tensors: TensorEntry[], samples: number[], out: Float32Array): Float32Array {
  let ti = 0;
  let base = 0;
  let n = tensors.length > 0 ? tensors[0].dims.reduce((a, b) => a * b, 1) : 0;
  let dv: DataView | null = null;
  // Samples ascend, so the tensor holding each one only moves forward.
  for (let k = 0; k < samples.length; k++) {
    const idx = samples[k];
    while (idx >= base + n && ti < tensors.length - 1) {
      base += n;
      ti++;
      n = tensors[ti].dims.reduce((a, b) => a * b, 1);
      dv = null;
    }
    const t = tensors[ti];
    if (!t.data) {
      out[k] = 0;
      continue;
    }
    dv ??= new DataView(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    const i = idx - base;
    out[k] = t.dtype === DTYPE_F32 ? dv.getFloat32(i * 4, true) : bf16BitsToF32(dv.getUint16(i * 2, true));
  }
  return out;
}

/**
 * The standalone rank's own verdict (CLI.md 3): when the reply's mass is the
 * whole world's, recompute the expected average from the generator.
 */
function selfCheck(
  spec: RankSpec,
  round: number,
  dtype: number,
  weight: number,
  indices: number[],
  values: number[],
): RankRoundResult['verdict'] {
  const all = Array.from({ length: spec.worldSize }, (_, r) => ({ rank: r }));
  const worldMass = all.reduce((s, c) => s + rankMass(spec.seed, c.rank, round), 0);
  if (weight !== worldMass || spec.idle) return 'unchecked';
  return checkAdoption({ seed: spec.seed, round, dtype, accepted: all, adopted: { weight, indices, values } })
    .verdict;
}
