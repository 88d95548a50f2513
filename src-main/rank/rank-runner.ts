// A rank: data and control handshakes, heartbeats, and per round one
// RoundFrame of deterministic synthetic tensors pre-scaled by its mass (elided
// when the mass is 0); it reads the consensus and adopts it (WIRE.md 4.6).
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { nodeMac } from '../crypto/node-mac';
import { connectWithRetry } from '../engine/conn';
import { ReusedReads } from '../engine/reused-reads';
import { modelLayout, rankMass, fillValues, dtypeCode } from '@shared/synthetic';
import { checkAdoption, sampleIndices } from '@shared/verdict';
import { encodeChannelMagic } from '@shared/wire/channel';
import {
  CONTROL_ACK_LEN,
  DATA_ACK_LEN,
  DTYPE_F32,
  ROUND_KIND_MODEL,
  deriveFrameCeiling,
} from '@shared/wire/constants';
import {
  encodeControlFrame,
  decodeControlFrame,
  MSG_KIND_CONTROL,
  MSG_KIND_TIMING,
} from '@shared/wire/control-frame';
import { decodeControlMsg, encodeTimingMsg, type TimingMsg } from '@shared/wire/control-msgs';
import {
  decodeControlAck,
  decodeDataAck,
  encodeControlHandshake,
  encodeDataHandshake,
} from '@shared/wire/handshake';
import { decodeRoundFrame, encodeRoundFrameChunks } from '@shared/wire/round-frame';
import { saltFromHex } from '@shared/wire/salt';
import {
  LITTLE_ENDIAN_HOST,
  bf16BitsToF32,
  checkTensorPayload,
  elidedTensor,
  tensorFromValues,
  type TensorEntry,
} from '@shared/wire/tensor';
import { RankLink } from './rank-link';
import { RoundEndCue } from './round-end-cue';
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

type Cmd = 'sync' | 'shutdown';

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
  const sampled = new Float32Array(samples.length);
  const valueBuffers: Float32Array[] = [];
  // Under the lab the parent checks every element bit for bit (the digest below); the
  // sampled self-check is for a rank run on its own (CLI.md 3) and would only cost each round.
  const selfChecks = spec.report !== 'ipc';
  const result: RankResult = { rank: spec.rank, roundsCompleted: 0, rounds: [], verdict: 'ok' };
  const connectOpts = { attempts: 150, intervalMs: 200 };

  // Data channel first, then control (WIRE.md 4.2: the relay accepts both concurrently).
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

  const sendTiming = (msg: TimingMsg) => {
    const frame = encodeControlFrame(
      {
        version: spec.controlVersion,
        msgKind: MSG_KIND_TIMING,
        payload: encodeTimingMsg(msg, { indexTable: spec.controlIndexTable }),
      },
      mac,
    );
    void control.sendBlob([frame]);
  };

  // Commands from the coordinator, queued so an early SyncNow is never lost.
  const cmds: Cmd[] = [];
  const cue = new RoundEndCue(() => cmds.length > 0 || control.failed !== null);
  fromParent?.((m) => cue.roundEnded(m.round));
  let cmdWaiter: ((c: Cmd) => void) | null = null;
  const pushCmd = (c: Cmd) => {
    if (cmdWaiter) {
      const w = cmdWaiter;
      cmdWaiter = null;
      w(c);
    } else cmds.push(c);
    cue.check();
  };
  let controlError: string | null = null;
  control.listen((blob) => {
    try {
      const f = decodeControlFrame(blob, mac, { version: spec.controlVersion });
      if (f.msgKind !== MSG_KIND_CONTROL) return;
      const m = decodeControlMsg(f.payload, { indexTable: spec.controlIndexTable });
      if (m.type === 'SyncNow') pushCmd('sync');
      else if (m.type === 'Shutdown' || m.type === 'ShutdownWithSave') pushCmd('shutdown');
    } catch (e) {
      // A control frame that fails its MAC or parse is fatal for the rank, as a wire error is for a
      // flodl worker: the rank cannot know what it missed (a lost SyncNow would park its host's fold
      // forever while its heartbeats keep it alive), so it leaves and its relay reports RankExit.
      controlError = `rejected control frame: ${(e as Error).message}`;
      process.stderr.write(`rank ${spec.rank}: ${controlError}\n`);
      pushCmd('shutdown');
    }
  });
  const nextCmd = (): Promise<Cmd> => {
    if (cmds.length > 0) return Promise.resolve(cmds.shift()!);
    if (control.failed) return Promise.resolve('shutdown');
    return new Promise((r) => (cmdWaiter = r));
  };
  control.conn.onClose(() => pushCmd('shutdown'));

  /**
   * The round's synthetic gradient: deterministic tensors pre-scaled by the rank's mass (elided
   * when the mass is 0). Made while the rank waits for SyncNow, as a trainer's backward pass
   * comes before its sync, so a round's time is the transport's and not the generator's.
   */
  const gradient = (round: number): { round: number; mass: number; tensors: TensorEntry[] } => {
    const mass = rankMass(spec.seed, spec.rank, round, spec.idle);
    const tensors: TensorEntry[] = [];
    let start = 0;
    layout.shapes.forEach((dims, ti) => {
      const n = dims.reduce((a, b) => a * b, 1);
      if (mass === 0 && !spec.noElision) tensors.push(elidedTensor(dtype, dims));
      else {
        // The previous round's buffer is free again: its frame was read by the peer before the
        // consensus came back. A fresh model-sized array a round was most of a rank's GC time.
        const v = (valueBuffers[ti] ??= new Float32Array(n));
        // Historical reproduction: an idle rank whose local state holds NaN (0 x NaN = NaN without elision).
        if (spec.idleNaN && mass === 0) v.fill(NaN);
        else fillValues(spec.seed, spec.rank, round, start, v);
        for (let i = 0; i < n; i++) v[i] *= mass;
        // f32 on a little-endian host: the values' own bytes are the wire bytes (no copy).
        tensors.push(
          dtype === DTYPE_F32 && LITTLE_ENDIAN_HOST
            ? { dtype, dims, data: new Uint8Array(v.buffer) }
            : tensorFromValues(dtype, dims, v),
        );
      }
      start += n;
    });
    return { round, mass, tensors };
  };
  // A lab rank makes its next gradient once the parent says the round is over for every rank
  // (ParentToRank roundEnd), then says so (RankToParent prepared): made at once after its own
  // adoption, it took a core from the ranks still receiving the consensus, and the driver
  // sends SyncNow only to ranks that are ready, so neither round pays for the generator.
  const cued = spec.report === 'ipc' && spec.paced && fromParent !== undefined;
  const prepare = (round: number): ReturnType<typeof gradient> | null => {
    if (spec.rounds !== 0 && round >= spec.rounds) return null;
    const g = gradient(round);
    if (cued) report({ type: 'prepared', rank: spec.rank, round });
    return g;
  };

  let step = 0;
  const heartbeat = setInterval(
    () => sendTiming({ type: 'Heartbeat', rank: spec.rank, stepCount: step }),
    spec.heartbeatMs,
  );
  sendTiming({ type: 'Heartbeat', rank: spec.rank, stepCount: 0 });
  report({ type: 'ready', rank: spec.rank, pid: process.pid });
  let prepared = prepare(0);

  try {
    for (let round = 0; spec.rounds === 0 || round < spec.rounds; round++) {
      if (spec.paced && (await nextCmd()) === 'shutdown') {
        if (controlError) throw new Error(controlError);
        break;
      }
      const t0 = performance.now();
      const { mass, tensors } = prepared?.round === round ? prepared : gradient(round);
      prepared = null;
      await data.sendBlob(
        encodeRoundFrameChunks({ roundKind: ROUND_KIND_MODEL, weight: mass, tensors }, mac),
      );
      const replyBytes = await data.next();
      // Reuse this round's value buffers only if no write still holds them (a shaped or
      // stalled link can deliver the consensus before the kernel took all of our frame).
      if (!data.conn.writer.flushed) valueBuffers.length = 0;
      const reply = decodeRoundFrame(replyBytes, mac, { ceiling });
      checkReplySchema(reply.tensors, tensors);
      step++;
      const roundMs = performance.now() - t0;
      // Adopted: a reply with weight > 0 replaces the local state. The round ends with this report.
      report({ type: 'adopted', rank: spec.rank, round, weight: reply.weight, ms: roundMs });
      // The rest waits for the round's end for every rank: the lab's check of this adoption, the
      // Timing frames, the next gradient (rank-readiness.ts says why).
      if (cued) await cue.until(round);
      const values =
        reply.weight > 0 ? sampleValues(reply.tensors, samples, sampled) : sampled.subarray(0, 0);
      let nonFinite = 0;
      for (const v of values) if (!Number.isFinite(v)) nonFinite++;
      report({
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
      result.rounds.push({
        round,
        weight: reply.weight,
        verdict: selfChecks
          ? selfCheck(spec, round, dtype, reply.weight, samples, Array.from(values))
          : 'unchecked',
      });
      result.roundsCompleted++;
      sendTiming({
        type: 'Batch',
        rank: spec.rank,
        batchMs: roundMs,
        dataMs: 0,
        stepCount: step,
        paramNorm: null,
        batchLoss: 0,
        syncDivergence: null,
      });
      sendTiming({
        type: 'SyncAck',
        rank: spec.rank,
        stepCount: step,
        divergence: null,
        postNorm: null,
        preNorm: null,
      });
      prepared = prepare(round + 1);
    }
    if (result.rounds.some((r) => r.verdict === 'mismatch')) result.verdict = 'mismatch';
  } catch (e) {
    result.verdict = 'error';
    result.error = (e as Error).message;
    report({ type: 'error', rank: spec.rank, message: (e as Error).message });
  } finally {
    clearInterval(heartbeat);
    if (!control.failed) sendTiming({ type: 'Exiting', rank: spec.rank });
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

/** Reads the sampled elements straight from the reply's bytes into `out` (no model-sized decode). */
function sampleValues(tensors: TensorEntry[], samples: number[], out: Float32Array): Float32Array {
  let ti = 0;
  let base = 0;
  let n = tensors.length > 0 ? tensors[0].dims.reduce((a, b) => a * b, 1) : 0;
  let dv: DataView | null = null;
  // Samples ascend, so the tensor holding each one only moves forward.
  samples.forEach((idx, k) => {
    while (idx >= base + n && ti < tensors.length - 1) {
      base += n;
      ti++;
      n = tensors[ti].dims.reduce((a, b) => a * b, 1);
      dv = null;
    }
    const t = tensors[ti];
    if (!t.data) {
      out[k] = 0;
      return;
    }
    dv ??= new DataView(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    const i = idx - base;
    out[k] = t.dtype === DTYPE_F32 ? dv.getFloat32(i * 4, true) : bf16BitsToF32(dv.getUint16(i * 2, true));
  });
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
