// WIRE.md 6.1, "the single hardest bug in this transport": a writer that
// pauses between a record's header and its payload (the engine's mid-frame
// stall link fault, on a real loopback socket) and a reader that polls with a
// short socket read timeout. The historical NaiveReader drops the partial
// frame when the timeout fires and the next bytes are read as a header (bad
// magic or MAC garbage); the committed reader ignores timeouts once a frame
// has started and decodes every record.
import { randomBytes } from 'node:crypto';
import { decodeMuxRecord, encodeMuxRecord } from '@shared/wire/mux';
import { isWireError } from '@shared/wire/errors';
import { MUX_HEADER_LEN } from '@shared/wire/constants';
import { MuxReader, NaiveReader, NAIVE_READER_LABEL } from '@shared/wire/readers';
import { nodeMac } from '../../crypto/node-mac';
import { Conn } from '../../engine/conn';
import { loopbackPair, sleep } from './loopback';
import type { Scenario, ScenarioContext } from './types';
import { SocketTrace } from './socket-trace';

const RECORDS = 4;
const STALL_MS = 120;
const READ_TIMEOUT_MS = 30;

async function run(naive: boolean, ctx: ScenarioContext) {
  const salt = randomBytes(16);
  const mac = nodeMac(salt);
  const pair = await loopbackPair();
  // The window's runs: the bytes the reader received, as a trace (socket-trace.ts).
  const trace = SocketTrace.open(ctx, mac, salt, pair.port, {
    from: 'writer (stalls mid-frame)',
    to: 'reader',
  });
  const writer = new Conn(pair.client, { readDir: 'down' });
  // Every record: its first 25 bytes (the header), a pause, then the payload.
  writer.setFault({ dir: 'up', stallMs: STALL_MS });
  const reader = naive ? new NaiveReader({ framing: 'mux' }) : new MuxReader();
  let decoded = 0;
  let firstError: { code: string; message: string; atRecord: number } | null = null;
  let lastByteAt = performance.now();
  let timeouts = 0;
  let dropped = 0;
  /** Bytes the first timeout dropped (the decisive unit's partial frame). */
  let firstDrop = 0;
  let ignoredWhileCommitted = 0;
  // The reader's view for the trace: the bytes it was handed, less what its timeouts dropped.
  const received: Buffer[] = [];
  let receivedBytes = 0;
  /** Stream offsets [from, to) each timeout dropped, and how far the reader had read at its error. */
  const drops: [number, number][] = [];
  let readToAtError = 0;
  pair.peer.on('data', (chunk: Buffer) => {
    lastByteAt = performance.now();
    trace?.feed('up', chunk);
    if (firstError) return;
    received.push(chunk);
    receivedBytes += chunk.length;
    try {
      for (const rec of reader.push(chunk)) {
        decodeMuxRecord(rec, mac);
        decoded++;
      }
    } catch (e) {
      firstError = {
        code: isWireError(e) ? e.code : 'ERROR',
        message: (e as Error).message,
        atRecord: decoded,
      };
      readToAtError = receivedBytes;
    }
  });
  // The socket read timeout of the shutdown-flag poll.
  const poll = setInterval(() => {
    if (performance.now() - lastByteAt < READ_TIMEOUT_MS) return;
    lastByteAt = performance.now();
    timeouts++;
    if (reader.status().state !== 'committed') return;
    if (reader instanceof NaiveReader) {
      const n = reader.timeout();
      // The partial frame it held is the tail of what it received (the writer stalls after it).
      if (n > 0 && !firstError) drops.push([receivedBytes - n, receivedBytes]);
      firstDrop ||= n;
      dropped += n;
    } else ignoredWhileCommitted++; // the idle gate: a started frame is never dropped
  }, 5);
  const t0 = performance.now();
  try {
    for (let i = 0; i < RECORDS; i++)
      writer.send(encodeMuxRecord({ kind: 'Data', rank: i, payload: randomBytes(96) }, mac));
    await writer.writer.idle();
    const until = performance.now() + 2000;
    while (!firstError && decoded < RECORDS && performance.now() < until) await sleep(10);
  } finally {
    clearInterval(poll);
    await pair.close();
  }
  const err = firstError as { code: string; atRecord: number } | null;
  if (trace) {
    if (naive && err) {
      // The wire's lane keeps every record whole (they were); the reader's lane shows the
      // header it read after the drop: what it rejected, with the code it rejected it by.
      const view = naiveView(Buffer.concat(received), drops, readToAtError);
      const seqs = trace.readerView(view, {
        id: 'h0.uplink.data (NaiveReader view)',
        to: `reader: the bytes it read after its read timeout dropped ${firstDrop} (not the wire)`,
      });
      const wireSeq = trace.units.up[err.atRecord];
      const why =
        `a read timeout fired mid-frame: the NaiveReader dropped the first ${firstDrop} bytes of record ${err.atRecord}` +
        `${wireSeq !== undefined ? ` (#${wireSeq} on the wire, whole there)` : ''} and read its payload as a header: ${err.code}`;
      if (seqs.length > 0)
        trace.decisiveSeq(seqs[0]!, {
          why,
          mark: { offset: 0, length: 4, label: `read as a record magic (${err.code})` },
        });
      else
        trace.decisive('up', err.atRecord, {
          why,
          mark: { offset: 0, length: firstDrop, label: 'dropped by the read timeout' },
        });
    } else
      trace.decisive('up', 0, {
        why: `its ${STALL_MS} ms stall after the header spanned read timeouts; the committed reader ignored them (${ignoredWhileCommitted} in all) and decoded it`,
        mark: { offset: 0, length: 25, label: `header, then a ${STALL_MS} ms stall` },
      });
    await trace.close();
  }
  return {
    recordsSent: RECORDS,
    recordsDecoded: decoded,
    stallMs: STALL_MS,
    readTimeoutMs: READ_TIMEOUT_MS,
    readTimeoutsFired: timeouts,
    bytesDropped: dropped,
    timeoutsIgnoredWhileCommitted: ignoredWhileCommitted,
    firstError: firstError as { code: string; message: string; atRecord: number } | null,
    ms: Math.round(performance.now() - t0),
  };
}

/**
 * The header the NaiveReader read after its first drop: the stream as it was handed the
 * bytes, less the dropped ranges, from the first drop's end for one mux header's length
 * (where its check failed), never past what it had read at the error.
 */
function naiveView(stream: Buffer, drops: [number, number][], readTo: number): Uint8Array {
  const first = drops[0];
  if (!first) return new Uint8Array(0);
  const kept: Buffer[] = [];
  let at = first[1];
  let left = MUX_HEADER_LEN;
  for (const [from, to] of [...drops.slice(1), [readTo, readTo] as [number, number]]) {
    if (left <= 0 || at >= readTo) break;
    const piece = stream.subarray(at, Math.min(from, at + left, readTo));
    kept.push(piece);
    left -= piece.length;
    at = to;
  }
  return new Uint8Array(Buffer.concat(kept));
}

export const midFrameDesync: Scenario = {
  number: 1,
  findingKind: 'rejected',
  name: 'mid-frame-desync',
  title: 'Mid-frame desync: a read timeout drops a partial frame',
  incident: 'WIRE.md 6.1',
  historicalBehaviour: NAIVE_READER_LABEL,
  narrative:
    `A writer sends ${RECORDS} Data records, pausing ${STALL_MS} ms after each 25-byte header; the reader polls with a ${READ_TIMEOUT_MS} ms read timeout. ` +
    'Historical (NaiveReader, labelled lab-only): the timeout fires mid-frame, the header is dropped, and the payload is then read as a header: look for BAD_MAGIC (or HMAC_MISMATCH) and bytesDropped. ' +
    'flodl 0.7 (committed read): timeouts after the first byte are ignored until the frame completes, so every record decodes and verifies.',
  async historical(ctx) {
    const ev = await run(true, ctx);
    return {
      reproduced:
        ev.firstError !== null &&
        ['BAD_MAGIC', 'HMAC_MISMATCH', 'BAD_VERSION', 'OVER_CEILING'].includes(ev.firstError.code) &&
        ev.bytesDropped > 0,
      evidence: ev,
    };
  },
  async current(ctx) {
    const ev = await run(false, ctx);
    return {
      held: ev.firstError === null && ev.recordsDecoded === RECORDS && ev.timeoutsIgnoredWhileCommitted > 0,
      evidence: ev,
    };
  },
};
