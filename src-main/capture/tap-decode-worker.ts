// The tap's decode worker (bundled to out/node/tap-decode-worker.mjs): every
// tapped connection's decoding (TappedConnection: queue, StreamDecoder, MAC
// checks, naming, stalls) runs here, so the tap's own thread only forwards
// bytes. An 8 MiB record decoded inline held the forwarding for the time its
// HMAC and copies took; here it costs the forwarding one copy, and the
// decoding waits for the burst to end (decode-gate.ts).
import { parentPort } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { nodeMac } from '../crypto/node-mac';
import { niceThisThread } from './thread-priority';
import { TappedConnection } from './tapped-connection';
import type { FromWorker, ToWorker } from './decode-worker-protocol';
import type { Direction } from '@shared/lab/state';
import { DecodeGate } from './decode-gate';

const port = parentPort;
if (!port) throw new Error('tap-decode-worker runs as a worker thread');
// Decoding at a lower priority than forwarding (thread-priority.ts): RELAY_LAB_TAP_DECODE_NICE
// (default 10) is how much lower; 0 keeps the forwarding's own.
const nice = Number(process.env.RELAY_LAB_TAP_DECODE_NICE ?? 10);
// Raising one's own nice needs no privilege; where it cannot be set (not Linux), decoding keeps
// the forwarding's priority, as before.
if (Number.isFinite(nice) && nice > 0) niceThisThread(nice);

const conns = new Map<number, TappedConnection>();
interface HeldChunk {
  conn: number;
  dir: Direction;
  bytes: Uint8Array;
  t: number;
}
// RELAY_LAB_TAP_DECODE_QUIET_MS (default 2; 0 decodes at once): decoding waits for a burst to end.
const gate = new DecodeGate<HeldChunk>((c) => conns.get(c.conn)?.observe(c.dir, c.bytes, c.t), {
  quietMs: Number(process.env.RELAY_LAB_TAP_DECODE_QUIET_MS ?? 2),
});
const acks = new Map<number, number>();
let ackScheduled = false;
const post = (m: FromWorker) => port.postMessage(m);

function ack(conn: number, bytes: number): void {
  acks.set(conn, (acks.get(conn) ?? 0) + bytes);
  if (ackScheduled) return;
  ackScheduled = true;
  setImmediate(() => {
    ackScheduled = false;
    for (const [c, b] of acks) post({ type: 'ack', conn: c, bytes: b });
    acks.clear();
  });
}

port.on('message', (m: ToWorker) => {
  try {
    // Whatever else comes (an end, a loss, a flush) follows the chunks held before it.
    if (m.type !== 'chunks') gate.flush();
    switch (m.type) {
      case 'open': {
        const o = m.options;
        const now = () => performance.timeOrigin + performance.now() - o.epochT0;
        const conn = new TappedConnection(
          m.conn,
          {
            ...o,
            mac: nodeMac(o.salt),
            onUnit: (link, unit) => post({ type: 'unit', conn: m.conn, link, unit }),
            onClose: (link, by, reset, t) => post({ type: 'close', conn: m.conn, link, by, reset, t }),
            onLog: (level, message) => post({ type: 'log', level, message }),
          },
          m.ends,
          now,
        );
        conns.set(m.conn, conn);
        break;
      }
      case 'chunks': {
        // Each segment copied out (the decoder may hold a chunk for a while), the buffer sent back.
        let at = 0;
        for (const seg of m.segments) {
          ack(seg.conn, seg.length);
          gate.hold(
            { conn: seg.conn, dir: seg.dir, bytes: m.bytes.slice(at, at + seg.length), t: seg.t },
            seg.length,
          );
          at += seg.length;
        }
        const buffer = m.bytes.buffer as ArrayBuffer;
        port.postMessage({ type: 'buffer', buffer } satisfies FromWorker, [buffer]);
        break;
      }
      case 'lost':
        conns.get(m.conn)?.lost(m.dir, m.bytes, m.t);
        break;
      case 'end':
        conns.get(m.conn)?.ended(m.dir, m.by, m.reset, m.t);
        break;
      case 'dispose':
        conns.get(m.conn)?.dispose();
        conns.delete(m.conn);
        break;
      case 'flush':
        for (const c of conns.values()) c.flush();
        post({ type: 'flushed', id: m.id });
        break;
    }
  } catch (e) {
    post({ type: 'log', level: 'error', message: `tap decode worker: ${(e as Error).message}` });
  }
});
