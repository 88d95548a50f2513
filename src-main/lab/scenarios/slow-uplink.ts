// WIRE.md 6.5, the unbounded outbound queue: a relay's uplink slower than
// its ranks. The relay's upstream writer (the engine's Conn, with the same
// queue-bound switch the relay uses) feeds a real socket whose far end reads
// at a capped rate; K ranks each hand it a model-sized frame (a mux Data
// record, as a relay forwards it) per round as fast
// as they can, and stop when the writer says there is no room (the relay's
// backpressure: it stops reading its ranks). Historical (unbounded queue): the
// queue takes everything, so its bytes grow with ranks x model bytes x
// rounds. flodl 0.7 (64 records): the producers wait, the queue stays bounded.
import { randomBytes } from 'node:crypto';
import { Conn } from '../../engine/conn';
import { MUX_HEADER_LEN, OUTBOUND_QUEUE_BOUND, REC_DATA } from '@shared/wire/constants';
import { encodeMuxHeader } from '@shared/wire/mux';
import { nodeMac } from '../../crypto/node-mac';
import { loopbackPair, sleep } from './loopback';
import type { Scenario, ScenarioContext } from './types';
import { SocketTrace } from './socket-trace';

const RANKS = 8;
const ROUNDS = 64;
const MODEL_BYTES = 32 * 1024;
/** A rank's frame as the relay forwards it upstream: a mux Data record. */
const RECORD_BYTES = MUX_HEADER_LEN + MODEL_BYTES;
/** The far end drains this many bytes per second. */
const UPLINK_BYTES_PER_S = 48 * 1024 * 1024;

async function run(unbounded: boolean, ctx: ScenarioContext) {
  const salt = randomBytes(16);
  const mac = nodeMac(salt);
  const pair = await loopbackPair();
  const up = new Conn(pair.client, { readDir: 'down', queueBound: unbounded ? Infinity : undefined });
  // The window's runs: the records as the slow reader got them. Checked streamed and kept short
  // (their MACs verified, 256 bytes of each kept): 16 MiB held whole would only slow the reader.
  const trace = SocketTrace.open(
    ctx,
    mac,
    salt,
    pair.port,
    {
      from: unbounded ? 'relay (unbounded upstream queue)' : 'relay (upstream queue of 64)',
      to: `controller (reads ${UPLINK_BYTES_PER_S / (1024 * 1024)} MiB/s)`,
      clientPort: pair.client.localPort ?? 0,
    },
    { snapLen: 256, wholeLimit: 0 },
  );
  // The slow uplink: read a chunk, then pause as long as the link needs for it.
  let received = 0;
  pair.peer.on('data', (c: Buffer) => {
    trace?.feed('up', c);
    received += c.length;
    pair.peer.pause();
    setTimeout(() => pair.peer.resume(), (c.length / UPLINK_BYTES_PER_S) * 1000);
  });
  const total = RANKS * ROUNDS * RECORD_BYTES;
  let peakRecords = 0;
  /** The record handed over when the queue was longest, and the first one whose producer had to wait. */
  let sent = 0;
  let peakAt = { record: 0, queued: 0 };
  let firstWaitAt: number | null = null;
  let peakRss = 0;
  let waits = 0;
  const rssBefore = process.memoryUsage().rss;
  const sample = () => {
    peakRecords = Math.max(peakRecords, up.writer.size);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  };
  const sampler = setInterval(sample, 5);
  const t0 = performance.now();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (let rank = 0; rank < RANKS; rank++) {
        // Each rank's frame is fresh memory, as a relay reading its rank would hold it.
        const frame = new Uint8Array(MODEL_BYTES).fill(rank);
        const room = up.send(encodeMuxHeader(REC_DATA, rank, frame, mac), frame);
        if (up.writer.size > peakAt.queued) peakAt = { record: sent, queued: up.writer.size };
        sent++;
        if (!room) {
          firstWaitAt ??= sent - 1;
          sample();
          waits++;
          await up.writer.room();
        }
      }
      sample();
    }
    await up.writer.idle();
    const until = performance.now() + 5000;
    while (received < total && performance.now() < until) await sleep(5);
  } finally {
    clearInterval(sampler);
    await pair.close();
    if (trace) {
      const mib = (n: number) => `${((n * RECORD_BYTES) / (1024 * 1024)).toFixed(1)} MiB`;
      if (firstWaitAt === null)
        trace.decisive('up', peakAt.record, {
          why: `handed over with ${peakAt.queued} records (${mib(peakAt.queued)}) already in the unbounded queue: no producer ever waited, the queue grew with ranks x model bytes x rounds`,
        });
      else
        trace.decisive('up', firstWaitAt, {
          why: `this record filled the queue to its bound of ${OUTBOUND_QUEUE_BOUND} (${mib(OUTBOUND_QUEUE_BOUND)}): its producer waited for room, as the relay stops reading its ranks, and the queue never grew past it`,
        });
      await trace.close();
    }
  }
  return {
    queueBound: unbounded ? 'unbounded' : OUTBOUND_QUEUE_BOUND,
    ranks: RANKS,
    rounds: ROUNDS,
    modelBytes: MODEL_BYTES,
    uplinkBytesPerS: UPLINK_BYTES_PER_S,
    bytesOffered: total,
    bytesDelivered: received,
    peakQueueRecords: peakRecords,
    recordBytes: RECORD_BYTES,
    peakQueueBytes: peakRecords * RECORD_BYTES,
    producerWaitsForRoom: waits,
    rssGrowthPeakBytes: Math.max(0, peakRss - rssBefore),
    ms: Math.round(performance.now() - t0),
  };
}

export const slowUplink: Scenario = {
  number: 5,
  findingKind: 'stalled',
  name: 'slow-uplink',
  title: 'A slow uplink: unbounded vs bounded outbound queue',
  incident: 'WIRE.md 6.5',
  historicalBehaviour: "lab-only historical behaviour: the relay's upstream queue unbounded",
  narrative:
    `${RANKS} ranks each hand the relay's upstream writer a ${MODEL_BYTES / 1024} KiB frame per round (a mux Data record) for ${ROUNDS} rounds; the uplink drains ${UPLINK_BYTES_PER_S / (1024 * 1024)} MiB/s. ` +
    'Historical (unbounded queue): the queue swallows everything; peakQueueBytes approaches ranks x model bytes x rounds. ' +
    `flodl 0.7 (bounded to ${OUTBOUND_QUEUE_BOUND} records): the producers wait for room (producerWaitsForRoom), the queue never exceeds the bound, and memory stays flat.`,
  async historical(ctx) {
    const ev = await run(true, ctx);
    // Reproduced: the queue held more than the bound allows, growing with ranks x model bytes.
    return {
      reproduced: ev.peakQueueRecords > OUTBOUND_QUEUE_BOUND && ev.producerWaitsForRoom === 0,
      evidence: ev,
    };
  },
  async current(ctx) {
    const ev = await run(false, ctx);
    return {
      held:
        ev.peakQueueRecords <= OUTBOUND_QUEUE_BOUND &&
        ev.producerWaitsForRoom > 0 &&
        ev.bytesDelivered === RANKS * ROUNDS * RECORD_BYTES,
      evidence: ev,
    };
  },
};
