// The tap's cost, for `relay-lab bench`: bytes per second of a real flodl
// uplink stream (channel magic, Hello, model-sized HostFrames) through the
// tap against the same bytes over a raw loopback socket, and the latency a
// tap adds per unit (small records echoed back, round trips through the tap
// against direct). Figures, never test assertions.
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { encodeChannelMagic } from '@shared/wire/channel';
import { encodeMuxRecord } from '@shared/wire/mux';
import { saltFromHex } from '@shared/wire/salt';
import { nodeMac } from '../crypto/node-mac';
import { TapProxy } from './tap-proxy';
import { byteSink, close, portOf, server, timedSend, uplinkChunks } from './tap-bench-io';
import { benchCaptureFloor } from './tap-capture-floor';
import { benchOneRecordPassive } from './tap-bench-passive';
import { startTapHere, startTapProcess } from './tap-bench-taps';

const MiB = 1024 * 1024;
const SALT_HEX = '42'.repeat(16);
const SALT = saltFromHex(SALT_HEX);

export interface TapBenchOptions {
  /** HostFrame payload size (default 4 MiB). */
  frameBytes?: number;
  frames?: number;
  /** Echo round trips for the latency figure. */
  pings?: number;
  /** One record of this many payload bytes, forwarded alone on a fresh connection (default 8 MiB). */
  recordBytes?: number;
  /** How many times the one-record figure is taken (its median is reported; default 7). */
  recordRepeats?: number;
  /** Decode in the tap's forwarding thread (the figure before the decode worker), for comparison. */
  decodeInline?: boolean;
  /**
   * Where the one-record figure's tap runs: 'process' (default) is `relay-lab tap` in its own
   * process, as a person puts it between a relay and the controller; 'thread' is a tap sharing
   * the sender's and receiver's event loop (the engine's own taps sit beside its relays).
   */
  recordTapIn?: 'process' | 'thread';
  /** The kernel's loopback capture as the floor under any tap, and the passive tap (default on; false skips both). */
  captureFloor?: boolean;
}

export async function benchTap(o: TapBenchOptions = {}) {
  const mac = nodeMac(SALT);
  const chunks = uplinkChunks(mac, o.frameBytes ?? 4 * MiB, o.frames ?? 16);
  const total = chunks.reduce((a, b) => a + b.length, 0);
  const { sink, wait } = await byteSink(total);
  let units = 0;
  let undecodable = 0;
  const tap = await TapProxy.start({
    listenPort: 0,
    upstreamHost: '127.0.0.1',
    upstreamPort: portOf(sink),
    mac,
    decodeInline: o.decodeInline,
    onUnit: (_l, u) => {
      units++;
      if (u.verdict !== 'ok') undecodable++;
    },
  });
  const { ms: rawMs } = await timedSend(portOf(sink), chunks, wait);
  const { ms: tapMs, at: forwardedAt } = await timedSend(tap.port, chunks, wait);
  const decodeDeadline = performance.now() + 60_000;
  while (units < chunks.length && performance.now() < decodeDeadline)
    await new Promise((r) => setTimeout(r, 5));
  const decodedMs = performance.now();
  await tap.close();
  await close(sink);
  const oneRecord = await benchOneRecord(o);
  const oneRecordInThread = o.recordTapIn ? null : await benchOneRecord({ ...o, recordTapIn: 'thread' });
  const passiveRecord =
    o.captureFloor === false
      ? null
      : await benchOneRecordPassive(mac, SALT_HEX, {
          recordBytes: o.recordBytes ?? 8 * MiB,
          repeats: o.recordRepeats ?? 31,
        });
  const captureFloor =
    o.captureFloor === false
      ? null
      : await benchCaptureFloor(mac, {
          recordBytes: o.recordBytes ?? 8 * MiB,
          repeats: o.recordRepeats,
          blocks: o.recordRepeats === undefined ? 3 : 1,
        });

  // Latency: a 33-byte record echoed back, one at a time.
  const echo = await server((s) => s.pipe(s));
  const echoTap = await TapProxy.start({
    listenPort: 0,
    upstreamHost: '127.0.0.1',
    upstreamPort: portOf(echo),
    mac,
    onUnit: () => {},
  });
  const small = encodeMuxRecord({ kind: 'Control', msg: { type: 'RankExit', rank: 3 } }, mac);
  const pingRtts = async (port: number) => {
    const c = net.connect({ port, host: '127.0.0.1' });
    c.setNoDelay(true);
    await new Promise((r) => c.once('connect', r));
    const rtts: number[] = [];
    for (let i = 0; i < (o.pings ?? 2000); i++) {
      const t0 = performance.now();
      const back = new Promise((r) => c.once('data', r));
      c.write(i === 0 ? Buffer.concat([encodeChannelMagic('data'), small]) : small);
      await back;
      rtts.push(performance.now() - t0);
    }
    c.destroy();
    return rtts.sort((a, b) => a - b);
  };
  const rawRtt = await pingRtts(portOf(echo));
  const tapRtt = await pingRtts(echoTap.port);
  await echoTap.close();
  await close(echo);
  const med = (xs: number[]) => xs[Math.floor(xs.length / 2)];
  const p99 = (xs: number[]) => xs[Math.floor(xs.length * 0.99)];
  return {
    bytes: total,
    rawMiBPerSec: total / MiB / (rawMs / 1000),
    tapMiBPerSec: total / MiB / (tapMs / 1000),
    tapOverRaw: rawMs / tapMs,
    unitsDecoded: units,
    unitsUndecodable: undecodable,
    /** How long after the last byte was forwarded the decoder finished (it runs beside, not in, the path). */
    decoderLagMs: Math.max(0, decodedMs - forwardedAt),
    /** A unit crosses the tap once each way per round trip: half the RTT difference is the added latency per unit. */
    addedLatencyPerUnitUs: {
      median: ((med(tapRtt) - med(rawRtt)) / 2) * 1000,
      p99: ((p99(tapRtt) - p99(rawRtt)) / 2) * 1000,
    },
    rttUs: { rawMedian: med(rawRtt) * 1000, tapMedian: med(tapRtt) * 1000 },
    /** One model-sized record alone: the time until its last byte is through, tap against raw (median). */
    record: oneRecord,
    /** The same with the tap in the bench's own event loop (null when only one placement was asked for). */
    recordTapInThread: oneRecordInThread,
    /**
     * The same record under the kernel's own loopback capture, no hop at all: the least any
     * observer that sees the bytes costs here (null when not asked for; `skipped` says why not).
     */
    captureFloor,
    /**
     * One record with `relay-lab tap --passive` watching its receiver: no hop, decoded from the
     * loopback capture after the burst (null when not asked for; `skipped` says why not).
     */
    passiveRecord,
  };
}

/**
 * One record of `recordBytes` sent on a fresh connection (its channel magic and Hello first, as a
 * relay's uplink starts), timed from the first byte written to the last byte received, straight
 * and through a tap; medians of `recordRepeats`, interleaved so both see the same machine.
 */
async function benchOneRecord(o: TapBenchOptions) {
  const mac = nodeMac(SALT);
  const chunks = uplinkChunks(mac, o.recordBytes ?? 8 * MiB, 1);
  const total = chunks.reduce((a, b) => a + b.length, 0);
  const { sink, wait } = await byteSink(total);
  const where = o.recordTapIn ?? 'process';
  const start = (forwardOnly: boolean) =>
    where === 'process'
      ? startTapProcess(portOf(sink), SALT_HEX, { forwardOnly })
      : startTapHere(mac, portOf(sink), { decodeInline: o.decodeInline, forwardOnly });
  const hop = await start(true);
  const tap = await start(false);
  const raw: number[] = [];
  const hopped: number[] = [];
  const tapped: number[] = [];
  try {
    for (let i = 0; i < (o.recordRepeats ?? 7); i++) {
      raw.push((await timedSend(portOf(sink), chunks, wait)).ms);
      hopped.push((await timedSend(hop.port, chunks, wait)).ms);
      const before = tap.units();
      tapped.push((await timedSend(tap.port, chunks, wait)).ms);
      // The next send starts once this one is decoded: its decoding must not share the next forwarding.
      const end = performance.now() + 30_000;
      while (tap.units() < before + chunks.length && performance.now() < end)
        await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    await tap.close();
    await hop.close();
    await close(sink);
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return {
    bytes: total,
    tapIn: where,
    rawMs: med(raw),
    /** The same hop forwarding only (decoding nothing): what any user-space hop costs here. */
    bareHopMs: med(hopped),
    tapMs: med(tapped),
    /** The tap's time over the direct time for one record (the goal is at most 1.2). */
    tapOverDirect: med(tapped) / med(raw),
    /** The floor under that ratio on this machine: a hop that only forwards, over direct. */
    bareHopOverDirect: med(hopped) / med(raw),
    /** What observing costs on top of the hop itself (1 = nothing). */
    tapOverBareHop: med(tapped) / med(hopped),
    decodedInWorker: !o.decodeInline,
  };
}
