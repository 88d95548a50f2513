// relay-lab bench: the engine measured against this machine's own limits, as
// ratios (benchmark figures, never test assertions). Each figure runs the
// engine's real code path on the same bytes as its baseline.
import { createHmac } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DTYPE_BF16, deriveFrameCeiling } from '@shared/wire/constants';
import { encodeRoundFrame } from '@shared/wire/round-frame';
import { RoundFrameStreamParser } from '@shared/wire/round-frame-stream';
import { saltFromHex } from '@shared/wire/salt';
import { nodeMac } from '../crypto/node-mac';
import { modelLayout } from '@shared/synthetic';
import { benchTap } from '../capture/tap-bench';
import { benchRounds } from './bench/rounds';
import { roundFloor, type MachineRates } from './bench/floor';
import { benchScale, type ScaleOptions } from './bench/scale';
import { benchFold } from './bench/fold';
import { benchLoopback } from './bench/loopback';
import { SMALL_ROUND_HOPS, benchLoopbackRoundTrip, smallRoundFloor } from './bench/round-trip';
import { AUTO_WARMUP } from '@shared/sweep/spec';
import { modelFrame } from './bench/model-frame';
import { median } from './bench/stages';

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
  /** Rounds of the small (4 KiB) model measured against its floor (default 40), after smallWarmup (default 20). */
  smallRounds?: number;
  smallWarmup?: number;
  /** Warm-up rounds before the model-sized rounds (default 1). */
  roundWarmup?: number;
  /** Bytes per socket write test (default 64 MiB). */
  loopbackBytes?: number;
  /** The tap section's sizes; false leaves it out. */
  tap?: Parameters<typeof benchTap>[0] | false;
  /** The scale section (long: 13 topologies up to 64 ranks and 256 MiB); absent: not run. */
  scale?: ScaleOptions;
  /** 'rounds': the rounds with the floor they are judged against (verify, fold, loopback), no tap nor scale. */
  only?: 'rounds';
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

/** 1. Verify a model-sized HostFrame payload (streamed parse + footer MAC, 64 KiB chunks) vs one node:crypto HMAC over the same bytes. */
export function benchVerify(bytes: number) {
  const mac = nodeMac(SALT);
  const frame = encodeRoundFrame(modelFrame(bytes, 1, 0), mac);
  const ceiling = deriveFrameCeiling(bytes);
  const hmacMs = best(3, () => void createHmac('sha256', SALT).update(frame).digest());
  const verifyMs = best(3, () => {
    const p = new RoundFrameStreamParser(mac, { ceiling, totalLen: frame.length });
    for (let o = 0; o < frame.length; o += 64 * 1024)
      p.push(frame.subarray(o, Math.min(frame.length, o + 64 * 1024)));
    p.end();
  });
  return { frameBytes: frame.length, hmacMs, verifyMs, ratio: hmacMs / verifyMs, target: 0.9 };
}

export { benchFold, foldInterleaved } from './bench/fold';

export { benchLoopback } from './bench/loopback';

export { benchRounds, type RoundBench } from './bench/rounds';

/**
 * `bench --only`: one section alone (the fold microbenchmarks; the rounds and their floor; the
 * scale section; the tap; the records list's earlier pages read back from a recording).
 */
export const BENCH_SECTIONS = ['fold', 'rounds', 'scale', 'tap', 'pages'] as const;
export type BenchSection = (typeof BENCH_SECTIONS)[number];

export async function benchMachine() {
  return { cpus: (await import('node:os')).cpus().length, node: process.version };
}

/** The fold microbenchmarks alone (`bench --only fold`). */
export function runFoldBench(o: BenchOptions = {}) {
  return {
    fold4x16MiB: benchFold(o.foldBytes ?? 16 * MiB, o.foldFrames ?? 4),
    fold4x16MiBBf16Wire: benchFold(o.foldBytes ?? 16 * MiB, o.foldFrames ?? 4, 7, DTYPE_BF16),
  };
}

export async function runBench(o: BenchOptions = {}) {
  const log = o.log ?? (() => {});
  const machine = await benchMachine();
  const K = o.ranksPerHost ?? 4;
  const H = o.hosts ?? 2;
  const modelBytes = o.roundModelBytes ?? 16 * MiB;
  log('1/5 verify');
  const verify = benchVerify(o.verifyBytes ?? 64 * MiB);
  log('2/5 fold');
  // The same models on the f32 and the bf16 wire (half the payload bytes; widening adds and an RNE re-encode).
  const { fold4x16MiB: fold, fold4x16MiBBf16Wire: foldBf16 } = runFoldBench(o);
  const loopback = await benchLoopback(o.loopbackBytes ?? 64 * MiB);
  log('tap: a flodl uplink through the live tap vs raw loopback');
  const tap = o.tap === false || o.only === 'rounds' ? null : await benchTap(o.tap);
  const common = { ranksPerHost: Array.from({ length: H }, () => K), modelBytes, rounds: o.rounds ?? 3 };
  log('3/5 rounds in fold');
  // One warm-up round each: a model-sized round's loops are compiled within it (a cold first
  // 16 MiB round took 2 to 3 times a steady one), and the median of three should not hold it.
  const bigWarmup = o.roundWarmup ?? 1;
  const foldRun = await benchRounds('fold', common, undefined, bigWarmup);
  log('3/5 rounds in direct');
  const directRun = await benchRounds('direct', common, undefined, bigWarmup);
  log('3/5 small rounds (4 KiB) against loopback round trips');
  const roundTrip = await benchLoopbackRoundTrip();
  // A small round's loops are short, so the lab's JIT takes rounds, not one (sweep's AUTO_WARMUP).
  const smallRun = await benchRounds(
    'fold',
    { ...common, modelBytes: 4096, rounds: o.smallRounds ?? 40 },
    undefined,
    o.smallWarmup ?? AUTO_WARMUP.maxRounds,
  );
  const smallFloor = smallRoundFloor(H, K, roundTrip, machine.cpus);
  // 4. fold/direct uplink bytes vs 1/K plus the exact header overhead.
  const F = modelLayout(modelBytes).shapes.reduce(
    (a, d) => a + 2 + 4 * d.length + 8 + d.reduce((x, y) => x * y, 1) * 4,
    17 + 8,
  );
  const measured =
    foldRun.round.uplinkDataBytesPerHostPerRound[0] / directRun.round.uplinkDataBytesPerHostPerRound[0];
  const exact = (25 + F) / (K * (4 + F));
  const oneOverK = 1 / K;
  const cpus = machine.cpus;
  // The floor from this machine's own rates (the relay's streamed fold; HMAC and copy as measured above).
  const rates: MachineRates = {
    socketBytesPerMs: loopback.bytes / loopback.ms,
    hmacBytesPerMs: verify.frameBytes / verify.hmacMs,
    copyBytesPerMs: fold.totalBytes / fold.copyMs,
    foldBytesPerMs: fold.totalBytes / fold.relayFoldMs,
    cores: cpus,
  };
  // A rank's frame on the wire: the RoundFrame (F) after its 4-byte length prefix.
  const floorFold = roundFloor({ hosts: H, ranksPerHost: K, frameBytes: F + 4, mode: 'fold' }, rates);
  const floorDirect = roundFloor({ hosts: H, ranksPerHost: K, frameBytes: F + 4, mode: 'direct' }, rates);
  let scale: Awaited<ReturnType<typeof benchScale>> | undefined;
  if (o.scale && o.only !== 'rounds') {
    log('scale: hosts x ranks at 64 KiB, then models 4 KiB to 256 MiB at 2 x 4');
    scale = await benchScale({ log, ...o.scale });
  }
  return {
    machine,
    verifyHostFrame: verify,
    fold4x16MiB: fold,
    fold4x16MiBBf16Wire: foldBf16,
    loopbackTcp: loopback,
    tap,
    round: {
      topology: `${H} hosts x ${K} ranks x ${modelBytes} B`,
      // The floor of a round (fold, the transport flodl runs); each mode's median round as a fraction of it.
      floorMs: floorFold.floorMs,
      floor: { rates, fold: floorFold, direct: floorDirect },
      fold: { ...foldRun.round, ofFloor: floorFold.floorMs / foldRun.round.medianMs },
      // Direct (lab-only) moves every rank's frame up unfolded: also measured against its own, larger floor.
      direct: {
        ...directRun.round,
        ofFloor: floorFold.floorMs / directRun.round.medianMs,
        ofOwnFloor: floorDirect.floorMs / directRun.round.medianMs,
      },
      // A tiny model: bound by hops between processes, not bytes (bench/round-trip.ts).
      small: {
        topology: `${H} hosts x ${K} ranks x 4096 B`,
        medianMs: smallRun.round.medianMs,
        msPerRound: smallRun.round.msPerRound,
        verdict: smallRun.round.verdict,
        stages: smallRun.round.stages,
        warmupRounds: smallRun.round.warmupRounds,
        roundTrip,
        hops: SMALL_ROUND_HOPS,
        floor: smallFloor,
        floorMs: smallFloor.floorMs,
        ofFloor: smallFloor.floorMs / smallRun.round.medianMs,
        // Against the critical path alone (3.5 round trips), as this figure was first defined.
        ofCriticalPath: smallFloor.criticalPathMs / smallRun.round.medianMs,
        target: 1 / 3,
      },
      ratioToLoopback: {
        fold:
          ((foldRun.round.uplinkDataBytesPerHostPerRound.reduce((a, b) => a + b, 0) /
            MiB /
            loopback.mibPerSec) *
            1000) /
          median(foldRun.round.msPerRound),
        direct:
          ((directRun.round.uplinkDataBytesPerHostPerRound.reduce((a, b) => a + b, 0) /
            MiB /
            loopback.mibPerSec) *
            1000) /
          median(directRun.round.msPerRound),
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
    eventLoopDelayP99Ms: {
      fold: foldRun.loopDelayP99Ms,
      direct: directRun.loopDelayP99Ms,
      foldMax: foldRun.loopDelayMaxMs,
      // With the warm-up round (the buffer pool filling, the JIT compiling), as information.
      foldWithWarmup: foldRun.loopDelayWithWarmupP99Ms,
      foldWithWarmupMax: foldRun.loopDelayWithWarmupMaxMs,
      directWithWarmup: directRun.loopDelayWithWarmupP99Ms,
      // Issue 13's goal: at most a frame's 16 ms in every mode.
      target: 16,
    },
    ...(scale ? { scale } : {}),
  };
}
