// relay-lab bench: the engine measured against this machine's own limits, as
// ratios (benchmark figures, never test assertions). Each figure runs the
// engine's real code path on the same bytes as its baseline.
import { createHmac, randomBytes } from 'node:crypto';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import net from 'node:net';
import { FoldAccumulator } from '@shared/fold';
import { getFoldKernel } from '@shared/fold-kernel';
import { deriveFrameCeiling } from '@shared/wire/constants';
import { encodeRoundFrame, type RoundFrame } from '@shared/wire/round-frame';
import { RoundFrameStreamParser } from '@shared/wire/round-frame-stream';
import { saltFromHex } from '@shared/wire/salt';
import { tensorFromValues } from '@shared/wire/tensor';
import { DEFAULT_TOPOLOGY, type TopologyConfig } from '@shared/lab/topology';
import { nodeMac } from '../crypto/node-mac';
import { FoldAcc } from '../engine/fold-acc';
import { closeServer, listen, serverPort } from '../engine/conn';
import { fillValues, modelLayout } from '../engine/synthetic';
import { runHeadless, type RunReport } from './headless';
import type { LabSession } from './session';

const MiB = 1024 * 1024;
const SALT = saltFromHex('42'.repeat(16));

export interface BenchOptions {
  verifyBytes?: number;
  foldBytes?: number;
  foldFrames?: number;
  roundModelBytes?: number;
  hosts?: number;
  ranksPerHost?: number;
  rounds?: number;
  log?: (m: string) => void;
}

function best(n: number, f: () => void): number {
  let min = Infinity;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    f();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

function modelFrame(bytes: number, seed: number, rank: number): RoundFrame {
  const { shapes } = modelLayout(bytes);
  let start = 0;
  const tensors = shapes.map((dims) => {
    const n = dims.reduce((a, b) => a * b, 1);
    const v = new Float32Array(n);
    fillValues(seed, rank, 0, start, v);
    start += n;
    return tensorFromValues(0, dims, v);
  });
  return { roundKind: 0, weight: 1, tensors };
}

/** 1. Verify a model-sized HostFrame payload (streamed parse + footer MAC, 64 KiB chunks) vs one node:crypto HMAC over the same bytes. */
export function benchVerify(bytes: number) {
  const mac = nodeMac(SALT);
  const frame = encodeRoundFrame(modelFrame(bytes, 1, 0), mac);
  const ceiling = deriveFrameCeiling(bytes);
  const hmacMs = best(3, () => void createHmac('sha256', SALT).update(frame).digest());
  const verifyMs = best(3, () => {
    const p = new RoundFrameStreamParser(mac, { ceiling, totalLen: frame.length });
    for (let o = 0; o < frame.length; o += 64 * 1024) p.push(frame.subarray(o, Math.min(frame.length, o + 64 * 1024)));
    p.end();
  });
  return { frameBytes: frame.length, hmacMs, verifyMs, ratio: hmacMs / verifyMs, target: 0.9 };
}

/** 2. Fold N frames (streamed deposits, as the relay does) vs Buffer.copy of the same bytes. */
export function benchFold(bytesPerFrame: number, frames: number) {
  const mac = nodeMac(SALT);
  const encoded = Array.from({ length: frames }, (_, r) => encodeRoundFrame(modelFrame(bytesPerFrame, 1, r), mac));
  const ceiling = deriveFrameCeiling(bytesPerFrame);
  const total = encoded.reduce((a, f) => a + f.length, 0);
  const dst = Buffer.allocUnsafe(Math.max(...encoded.map((f) => f.length)));
  const copyMs = best(3, () => {
    for (const f of encoded) Buffer.from(f.buffer, f.byteOffset, f.length).copy(dst);
  });
  // The fold alone (the deposits' bytes through the accumulator, no MAC): what the kernel costs.
  const decoded = encoded.map((f) => {
    const parts: { dtype: number; dims: number[]; data: Uint8Array | null }[] = [];
    let data: Uint8Array[] = [];
    const p = new RoundFrameStreamParser(mac, {
      ceiling,
      sink: { onTensor: (t) => void parts.push({ dtype: t.dtype, dims: t.dims, data: null }), onData: (_i, _o, b) => void data.push(b) },
    });
    p.push(f);
    p.end();
    parts.forEach((t) => {
      t.data = Buffer.concat(data);
      data = [];
    });
    return { roundKind: 0, weight: 1, tensors: parts } as RoundFrame;
  });
  const foldMs = best(3, () => {
    const acc = new FoldAccumulator();
    decoded.forEach((f, i) => acc.deposit(i, f));
    acc.result();
  });
  // The relay's fold alone: FoldAcc fed each deposit's tensor bytes in 64 KiB socket-sized chunks (no MAC).
  const relayFoldMs = best(3, () => {
    const acc = new FoldAcc();
    decoded.forEach((f, r) => {
      const sink = acc.depositSink(r);
      sink.onHeader!({ roundKind: 0, weight: 1, numTensors: f.tensors.length });
      f.tensors.forEach((t, i) => {
        sink.onTensor!({ index: i, dtype: t.dtype, dims: t.dims, nbytes: t.data!.length });
        for (let o = 0; o < t.data!.length; o += 64 * 1024) sink.onData!(i, o, t.data!.subarray(o, Math.min(t.data!.length, o + 64 * 1024)));
      });
      sink.onComplete!({ tag: new Uint8Array(8), wireLen: 0 });
    });
    acc.result();
  });
  // The relay's own path: every deposit streamed in 64 KiB socket-sized chunks through the parser (MAC included).
  const relayMs = best(3, () => {
    const acc = new FoldAcc();
    encoded.forEach((f, r) => {
      const p = new RoundFrameStreamParser(mac, { ceiling, totalLen: f.length, sink: acc.depositSink(r) });
      for (let o = 0; o < f.length; o += 64 * 1024) p.push(f.subarray(o, Math.min(f.length, o + 64 * 1024)));
      p.end();
    });
    acc.result();
  });
  const hmacMs = best(3, () => {
    for (const f of encoded) createHmac('sha256', SALT).update(f).digest();
  });
  return {
    frames,
    bytesPerFrame,
    totalBytes: total,
    kernel: getFoldKernel().name,
    copyMs,
    foldMs,
    ratio: copyMs / foldMs,
    target: 0.5,
    relayFoldMs,
    relayFoldRatio: copyMs / relayFoldMs,
    relayStreamedWithMacMs: relayMs,
    relayStreamedRatioToCopyPlusHmac: (copyMs + hmacMs) / relayMs,
  };
}

/** Raw loopback TCP: how fast this machine moves bytes through one socket pair. */
export async function benchLoopback(bytes: number) {
  const server = await listen();
  const got = new Promise<number>((resolve) => {
    server.once('connection', (s) => {
      let n = 0;
      s.on('data', (c) => {
        n += c.length;
        if (n >= bytes) resolve(performance.now());
      });
    });
  });
  const client = net.connect({ port: serverPort(server), host: '127.0.0.1' });
  await new Promise((r) => client.once('connect', r));
  const buf = randomBytes(bytes);
  const t0 = performance.now();
  client.write(buf);
  const t1 = await got;
  client.destroy();
  await closeServer(server);
  const ms = t1 - t0;
  return { bytes, ms, mibPerSec: bytes / MiB / (ms / 1000) };
}

export interface RoundBench {
  mode: string;
  msPerRound: number[];
  uplinkDataBytesPerHostPerRound: number[];
  verdict: RunReport['verdict'];
}

/** 3 + 5. Rounds of H hosts x K ranks in one mode, with the event-loop delay of this (the engine's) process. */
export async function benchRounds(mode: 'fold' | 'direct', cfg: Partial<TopologyConfig>) {
  const h = monitorEventLoopDelay({ resolution: 1 });
  let session: LabSession | null = null;
  // Measured while rounds run (not during process spawning or teardown).
  const report = await runHeadless({ ...DEFAULT_TOPOLOGY, roundIntervalMs: 0, ...cfg, mode } as TopologyConfig, {
    snapLen: 0,
    onSession: (s) => (session = s),
    onRoundsStart: () => h.enable(),
    onRoundsEnd: () => h.disable(),
  });
  const tap = (session as unknown as LabSession).activeCluster!.tap;
  const hosts = report.hosts;
  const dataUp = new Array<number>(hosts).fill(0);
  for (let s = 0; s < tap.recordCount; s++) {
    const r = tap.findRecord(s);
    if (!r || r.dir !== 'up' || !r.link.endsWith('uplink.data')) continue;
    if (r.kind === 'HostFrame' || r.kind === 'RoundFrame') dataUp[r.host ?? 0] += r.length;
  }
  const rounds = Math.max(1, report.rounds.length);
  return {
    round: {
      mode,
      msPerRound: report.rounds.map((r) => Math.round(r.durationMs * 10) / 10),
      uplinkDataBytesPerHostPerRound: dataUp.map((b) => b / rounds),
      verdict: report.verdict,
    } as RoundBench,
    loopDelayP99Ms: h.percentile(99) / 1e6,
    loopDelayMaxMs: h.max / 1e6,
  };
}

export async function runBench(o: BenchOptions = {}) {
  const log = o.log ?? (() => {});
  const K = o.ranksPerHost ?? 4;
  const H = o.hosts ?? 2;
  const modelBytes = o.roundModelBytes ?? 16 * MiB;
  log('1/5 verify');
  const verify = benchVerify(o.verifyBytes ?? 64 * MiB);
  log('2/5 fold');
  const fold = benchFold(o.foldBytes ?? 16 * MiB, o.foldFrames ?? 4);
  const loopback = await benchLoopback(64 * MiB);
  const common = { ranksPerHost: Array.from({ length: H }, () => K), modelBytes, rounds: o.rounds ?? 3 };
  log('3/5 rounds in fold');
  const foldRun = await benchRounds('fold', common);
  log('3/5 rounds in direct');
  const directRun = await benchRounds('direct', common);
  // 4. fold/direct uplink bytes vs 1/K plus the exact header overhead.
  const F = modelLayout(modelBytes).shapes.reduce((a, d) => a + 2 + 4 * d.length + 8 + d.reduce((x, y) => x * y, 1) * 4, 17 + 8);
  const measured = foldRun.round.uplinkDataBytesPerHostPerRound[0] / directRun.round.uplinkDataBytesPerHostPerRound[0];
  const exact = (25 + F) / (K * (4 + F));
  const oneOverK = 1 / K;
  return {
    machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
    verifyHostFrame: verify,
    fold4x16MiB: fold,
    loopbackTcp: loopback,
    round: {
      topology: `${H} hosts x ${K} ranks x ${modelBytes} B`,
      fold: foldRun.round,
      direct: directRun.round,
      ratioToLoopback: {
        fold: (foldRun.round.uplinkDataBytesPerHostPerRound.reduce((a, b) => a + b, 0) / MiB / loopback.mibPerSec) * 1000 / median(foldRun.round.msPerRound),
        direct: (directRun.round.uplinkDataBytesPerHostPerRound.reduce((a, b) => a + b, 0) / MiB / loopback.mibPerSec) * 1000 / median(directRun.round.msPerRound),
      },
    },
    uplinkFoldOverDirect: {
      measured,
      oneOverK,
      exactWithHeaders: exact,
      frameBytes: F,
      deviationFromExact: Math.abs(measured - exact) / exact,
      deviationFromOneOverK: Math.abs(measured - oneOverK) / oneOverK,
      target: 0.001,
    },
    eventLoopDelayP99Ms: { fold: foldRun.loopDelayP99Ms, direct: directRun.loopDelayP99Ms, foldMax: foldRun.loopDelayMaxMs, target: 20 },
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
}

