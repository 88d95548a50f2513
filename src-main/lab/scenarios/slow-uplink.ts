// WIRE.md 6.5, the unbounded outbound queue: a relay's uplink slower than
// its ranks. The relay's upstream writer (the engine's Conn, with the same
// queue-bound switch the relay uses) feeds a real socket whose far end reads
// at a capped rate; K ranks each hand it a model-sized frame per round as fast
// as they can, and stop when the writer says there is no room (the relay's
// backpressure: it stops reading its ranks). Historical (unbounded queue): the
// queue takes everything, so its bytes grow with ranks x model bytes x
// rounds. flodl 0.7 (64 records): the producers wait, the queue stays bounded.
import { Conn } from '../../engine/conn';
import { OUTBOUND_QUEUE_BOUND } from '@shared/wire/constants';
import { loopbackPair, sleep } from './loopback';
import type { Scenario } from './types';

const RANKS = 8;
const ROUNDS = 64;
const MODEL_BYTES = 32 * 1024;
/** The far end drains this many bytes per second. */
const UPLINK_BYTES_PER_S = 48 * 1024 * 1024;

async function run(unbounded: boolean) {
  const pair = await loopbackPair();
  const up = new Conn(pair.client, { readDir: 'down', queueBound: unbounded ? Infinity : undefined });
  // The slow uplink: read a chunk, then pause as long as the link needs for it.
  let received = 0;
  pair.peer.on('data', (c: Buffer) => {
    received += c.length;
    pair.peer.pause();
    setTimeout(() => pair.peer.resume(), (c.length / UPLINK_BYTES_PER_S) * 1000);
  });
  const total = RANKS * ROUNDS * MODEL_BYTES;
  let peakRecords = 0;
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
        if (!up.send(frame)) {
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
    peakQueueBytes: peakRecords * MODEL_BYTES,
    producerWaitsForRoom: waits,
    rssGrowthPeakBytes: Math.max(0, peakRss - rssBefore),
    ms: Math.round(performance.now() - t0),
  };
}

export const slowUplink: Scenario = {
  number: 5,
  name: 'slow-uplink',
  title: 'A slow uplink: unbounded vs bounded outbound queue',
  incident: 'WIRE.md 6.5',
  historicalBehaviour: "lab-only historical behaviour: the relay's upstream queue unbounded",
  narrative:
    `${RANKS} ranks each hand the relay's upstream writer a ${MODEL_BYTES / 1024} KiB frame per round for ${ROUNDS} rounds; the uplink drains ${UPLINK_BYTES_PER_S / (1024 * 1024)} MiB/s. ` +
    'Historical (unbounded queue): the queue swallows everything; peakQueueBytes approaches ranks x model bytes x rounds. ' +
    `flodl 0.7 (bounded to ${OUTBOUND_QUEUE_BOUND} records): the producers wait for room (producerWaitsForRoom), the queue never exceeds the bound, and memory stays flat.`,
  async historical() {
    const ev = await run(true);
    // Reproduced: the queue held more than the bound allows, growing with ranks x model bytes.
    return {
      reproduced: ev.peakQueueRecords > OUTBOUND_QUEUE_BOUND && ev.producerWaitsForRoom === 0,
      evidence: ev,
    };
  },
  async current() {
    const ev = await run(false);
    return {
      held:
        ev.peakQueueRecords <= OUTBOUND_QUEUE_BOUND &&
        ev.producerWaitsForRoom > 0 &&
        ev.bytesDelivered === RANKS * ROUNDS * MODEL_BYTES,
      evidence: ev,
    };
  },
};
