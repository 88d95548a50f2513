// relay-lab calibrate: this machine's costs, measured from the bench's own
// primitives (never from a sweep's rounds), into the small file the round
// model reads (src-shared/model/calibration.ts). Every figure is a best-of-n
// of one primitive on the lab's own code path: HMAC-SHA-256 (node:crypto),
// the streamed verify a relay runs on a deposit, the relay's fold, a memory
// copy, a rank's decode of the consensus, loopback TCP between two processes,
// and the one-way hop and CPU of a small message between processes.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { createHmac } from 'node:crypto';
import { deriveFrameCeiling } from '@shared/wire/constants';
import { encodeRoundFrame, decodeRoundFrame } from '@shared/wire/round-frame';
import { RoundFrameStreamParser } from '@shared/wire/round-frame-stream';
import { saltFromHex } from '@shared/wire/salt';
import { CALIBRATION_FORMAT, type Calibration } from '@shared/model/calibration';
import { nodeMac } from '../crypto/node-mac';
import { benchFold } from '../lab/bench/fold';
import { benchLoopback } from '../lab/bench/loopback';
import { benchLoopbackRoundTrip } from '../lab/bench/round-trip';
import { modelFrame } from '../lab/bench/model-frame';

const MiB = 1024 * 1024;

export interface CalibrateOptions {
  /** Bytes per primitive (default 8 MiB: large enough that per-call overheads vanish). */
  bytes?: number;
  /** Loopback transfer bytes (default 64 MiB). */
  loopbackBytes?: number;
  /** Repetitions of each CPU primitive, best taken (default 9). */
  reps?: number;
  /** Ping-pongs for the hop (default 2000). */
  trips?: number;
  log?: (m: string) => void;
}

function time(f: () => void): number {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
}

const SALT = saltFromHex('42'.repeat(16));

/**
 * HMAC, the streamed verify a relay runs on a deposit (64 KiB reads) and a
 * rank's decode of the consensus, measured in alternation (best of `reps`
 * each), so that a busy second of a shared machine hits all three alike.
 */
function benchMacs(bytes: number, reps: number) {
  const mac = nodeMac(SALT);
  const frame = encodeRoundFrame(modelFrame(bytes, 1, 0), mac);
  const ceiling = deriveFrameCeiling(bytes);
  const min = { hmac: Infinity, verify: Infinity, decode: Infinity };
  for (let i = 0; i < reps; i++) {
    min.hmac = Math.min(
      min.hmac,
      time(() => void createHmac('sha256', SALT).update(frame).digest()),
    );
    min.verify = Math.min(
      min.verify,
      time(() => {
        const p = new RoundFrameStreamParser(mac, { ceiling, totalLen: frame.length });
        for (let o = 0; o < frame.length; o += 64 * 1024)
          p.push(frame.subarray(o, Math.min(frame.length, o + 64 * 1024)));
        p.end();
      }),
    );
    min.decode = Math.min(
      min.decode,
      time(() => void decodeRoundFrame(frame, mac)),
    );
  }
  return { frameBytes: frame.length, hmacMs: min.hmac, verifyMs: min.verify, decodeMs: min.decode };
}

export async function calibrate(o: CalibrateOptions = {}): Promise<Calibration> {
  const log = o.log ?? (() => {});
  const bytes = o.bytes ?? 8 * MiB;
  log('calibrate: HMAC, streamed verify, decode');
  const macs = benchMacs(bytes, o.reps ?? 9);
  log('calibrate: fold and copy');
  const fold = benchFold(bytes, 4);
  log('calibrate: loopback TCP');
  const loopback = await benchLoopback(o.loopbackBytes ?? 64 * MiB);
  log('calibrate: loopback hops');
  const rt = await benchLoopbackRoundTrip(o.trips ?? 2000);
  return {
    format: CALIBRATION_FORMAT,
    version: 1,
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, node: process.version, platform: `${os.platform()} ${os.arch()}` },
    cores: os.cpus().length,
    hmacBytesPerMs: macs.frameBytes / macs.hmacMs,
    verifyBytesPerMs: macs.frameBytes / macs.verifyMs,
    foldBytesPerMs: fold.totalBytes / fold.relayFoldMs,
    copyBytesPerMs: fold.totalBytes / fold.copyMs,
    decodeBytesPerMs: macs.frameBytes / macs.decodeMs,
    socketBytesPerMs: loopback.bytes / loopback.ms,
    hopMs: rt.medianUs / 2 / 1000,
    cpuPerMessageMs: rt.cpuPerMessageUs / 1000,
    primitives: {
      primitiveBytes: bytes,
      hmacMs: macs.hmacMs,
      verifyMs: macs.verifyMs,
      foldMs: fold.relayFoldMs,
      foldInputBytes: fold.totalBytes,
      copyMs: fold.copyMs,
      decodeMs: macs.decodeMs,
      loopbackBytes: loopback.bytes,
      loopbackMs: loopback.ms,
      roundTripMedianUs: rt.medianUs,
      roundTripP90Us: rt.p90Us,
      trips: rt.trips,
    },
  };
}
