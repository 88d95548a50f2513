// WIRE.md 6.3, the two-writer HMAC race: two producers writing the same
// upstream socket. Historically each had its own writer (here: two of the
// engine's OutboundWriters on one real socket), so a model-sized record's
// slices interleaved with the other's and the reader saw broken records (MAC
// failures, then garbage). flodl 0.7's single-writer discipline (WIRE.md 4.7)
// sends every record through one queue: all records arrive whole.
import { randomBytes } from 'node:crypto';
import { encodeMuxHeader } from '@shared/wire/mux';
import { REC_HOST_FRAME } from '@shared/wire/constants';
import { isWireError } from '@shared/wire/errors';
import { MuxReader } from '@shared/wire/readers';
import { nodeMac } from '../../crypto/node-mac';
import { OutboundWriter, WRITE_SLICE } from '../../engine/outbound';
import { loopbackPair, sleep } from './loopback';
import type { Scenario, ScenarioContext } from './types';
import { SocketTrace } from './socket-trace';

export const PER_WRITER = 3;
/** Larger than one write slice, so a record goes out over several event-loop turns. */
const PAYLOAD = WRITE_SLICE + WRITE_SLICE / 2;

async function run(twoWriters: boolean, ctx: ScenarioContext) {
  const salt = randomBytes(16);
  const mac = nodeMac(salt);
  const pair = await loopbackPair();
  // The window's runs: the bytes the reader received, decoded from the side (socket-trace.ts).
  const trace = SocketTrace.open(ctx, mac, salt, pair.port, {
    from: twoWriters ? 'two writers' : 'one writer',
    to: 'reader',
  });
  const a = new OutboundWriter(pair.client);
  const b = twoWriters ? new OutboundWriter(pair.client) : a;
  let ok = 0;
  // Streamed as the controller reads HostFrames: each record's MAC is verified as it completes.
  const reader = new MuxReader({
    mac,
    sink: { onStart: () => {}, onChunk: () => {}, onEnd: () => void ok++ },
  });
  let failed = 0;
  let firstError: { code: string; message: string; atRecord: number } | null = null;
  let received = 0;
  pair.peer.on('data', (chunk: Buffer) => {
    received += chunk.length;
    trace?.feed('up', chunk);
    if (firstError) return; // a desynced stream is unusable from here on
    try {
      reader.push(chunk);
    } catch (e) {
      failed++;
      firstError = { code: isWireError(e) ? e.code : 'ERROR', message: (e as Error).message, atRecord: ok };
    }
  });
  const total = PER_WRITER * 2;
  const bytes = total * (25 + PAYLOAD);
  const t0 = performance.now();
  try {
    // Two producers (rank 0's and rank 1's), each with its own records, at the same time.
    for (let i = 0; i < PER_WRITER; i++) {
      for (const [w, rank] of [
        [a, 0],
        [b, 1],
      ] as const) {
        const payload = new Uint8Array(PAYLOAD).fill(rank + 1);
        w.enqueue([encodeMuxHeader(REC_HOST_FRAME, rank, payload, mac), payload]);
      }
    }
    await Promise.all([a.idle(), b.idle()]);
    const until = performance.now() + 3000;
    while (!firstError && ok < total && received < bytes && performance.now() < until) await sleep(10);
    while (!firstError && ok < total && performance.now() < until) await sleep(10);
  } finally {
    await pair.close();
    // Historical: the first unit the side decoder rejects is the decisive one (the interleaving).
    if (trace && !twoWriters)
      trace.decisive('up', 0, { why: 'one writer: every record went out whole and its MAC verified' });
    await trace?.close();
  }
  return {
    writers: twoWriters ? 2 : 1,
    recordsSent: total,
    payloadBytes: PAYLOAD,
    recordsVerified: ok,
    recordsFailed: failed,
    firstError: firstError as { code: string; message: string; atRecord: number } | null,
    ms: Math.round(performance.now() - t0),
  };
}

export const twoWriters: Scenario = {
  number: 2,
  findingKind: 'hmac',
  name: 'two-writers',
  title: 'Two writers on one socket: interleaved records fail their MAC',
  incident: 'WIRE.md 6.3',
  historicalBehaviour:
    'lab-only historical behaviour: two writers on one socket (pre single-writer discipline)',
  narrative:
    `Two producers each send ${PER_WRITER} HostFrame records of ${PAYLOAD} B on one socket. ` +
    'Historical: each producer has its own writer, so slices of one record land inside the other; the reader reports HMAC_MISMATCH (or garbage after it) at the first interleaved record. ' +
    "flodl 0.7: one writer per socket owns a queue, records never interleave, every record's MAC verifies.",
  async historical(ctx) {
    const ev = await run(true, ctx);
    return { reproduced: ev.firstError !== null && ev.recordsVerified < ev.recordsSent, evidence: ev };
  },
  async current(ctx) {
    const ev = await run(false, ctx);
    return { held: ev.firstError === null && ev.recordsVerified === ev.recordsSent, evidence: ev };
  },
};
