// WIRE.md 6.2: a peer that vanishes mid-frame without closing (power loss, a
// partition: no FIN, no RST). Here a real process writes a length prefix and
// part of the frame (after its data handshake, as a rank would), then stops
// itself (SIGSTOP): the socket stays open and silent. Historical: the committed read has no deadline and waits forever
// (bounded here by a short observation window). flodl 0.7: the committed read's
// no-progress deadline errors STARVED (60 s in flodl; shortened for the lab).
import { randomBytes } from 'node:crypto';
import type { WireError } from '@shared/wire/errors';
import { DEFAULT_DATA_VERSION, ROUND_FRAME_MAGIC } from '@shared/wire/constants';
import { encodeDataHandshake } from '@shared/wire/handshake';
import { encodeLenPrefix } from '@shared/wire/len-frame';
import { nodeMac } from '../../crypto/node-mac';
import { SocketTrace } from './socket-trace';
import type { Socket } from 'node:net';
import { closeServer, listen, serverPort } from '../../engine/conn';
import { LenFrameReader } from '@shared/wire/len-frame-reader';
import { runScript } from './child';
import { sleep } from './loopback';
import type { Scenario, ScenarioContext } from './types';

const FRAME_LEN = 4096;
const SENT_BODY = 1000;
const STARVATION_MS = 300;
const OBSERVE_MS = 1500;

// The peer: connects, writes its bytes (given as hex), says so, then stops itself.
const PEER = `
const net = require('node:net');
const [port, hex] = process.argv.slice(-2);
const s = net.connect({ host: '127.0.0.1', port: Number(port), noDelay: true }, () => {
  const b = Buffer.from(hex, 'hex');
  s.write(b, () => {
    process.stdout.write(JSON.stringify({ wrote: b.length }) + '\\n', () => process.kill(process.pid, 'SIGSTOP'));
  });
});
s.on('error', () => process.exit(1));
`;

/**
 * What the peer sends, as a rank starts its data connection to its relay
 * (WIRE.md 3.6): the data handshake, then a frame's length prefix and the
 * first SENT_BODY bytes of a RoundFrame (its magic, then filler).
 */
function peerBytes(): { hello: Uint8Array; partial: Uint8Array } {
  const hello = encodeDataHandshake({ version: DEFAULT_DATA_VERSION, rank: 0, worldSize: 1 });
  const body = new Uint8Array(SENT_BODY).fill(7);
  new DataView(body.buffer).setUint32(0, ROUND_FRAME_MAGIC, true);
  return { hello, partial: Buffer.concat([encodeLenPrefix(FRAME_LEN), body]) };
}

async function run(ctx: ScenarioContext, deadlineMs: number | null) {
  const server = await listen('127.0.0.1', 0);
  const accepted = new Promise<Socket>((r) => server.once('connection', r));
  const { hello, partial } = peerBytes();
  const salt = randomBytes(16);
  const peer = runScript(PEER, [String(serverPort(server)), Buffer.concat([hello, partial]).toString('hex')]);
  ctx.track(peer.pid);
  let got = 0;
  let error: WireError | null = null;
  let erroredAfterMs: number | null = null;
  let trace: SocketTrace | null = null;
  try {
    const socket = await accepted;
    socket.on('error', () => {});
    const splitter = new LenFrameReader({
      ceiling: 64 * 1024 * 1024,
      now: () => performance.now(),
      sink: { onStart: () => {}, onChunk: (b) => (got += b.length), onEnd: () => {} },
    });
    // The window's runs: what the reader received, as the rank's data link (socket-trace.ts).
    trace = SocketTrace.open(ctx, nodeMac(salt), salt, serverPort(server), {
      id: 'h0.r0.data',
      channel: 'data',
      kind: 'loopback',
      from: 'rank 0 (stops mid-frame)',
      to: 'relay',
      rank: 0,
      clientPort: socket.remotePort ?? 0,
    });
    // The handshake first, then the frame the reader commits to.
    let handshake = hello.length;
    socket.on('data', (c: Buffer) => {
      trace?.feed('up', c);
      const skip = Math.min(handshake, c.length);
      handshake -= skip;
      if (c.length > skip) splitter.push(c.subarray(skip));
    });
    await peer.next((v) => typeof v.wrote === 'number', 10_000);
    // The peer is stopped now: connected, silent, never closing.
    const stoppedAt = performance.now();
    while (performance.now() - stoppedAt < OBSERVE_MS) {
      await sleep(25);
      if (deadlineMs !== null && !error) {
        error = splitter.checkStarvation(performance.now(), deadlineMs);
        if (error) {
          erroredAfterMs = Math.round(performance.now() - stoppedAt);
          socket.destroy();
          break;
        }
      }
    }
    const stillWaiting = splitter.status().state === 'committed' && !error;
    socket.destroy();
    const t = trace as SocketTrace | null;
    trace = null; // closed here, with the reader's reason; the finally closes it only on a failure
    if (t) {
      // The frame never completed: the trace ends it as the reader did, or as the reader still waits.
      const e = error as WireError | null;
      await t.close(
        e
          ? { code: e.code, why: `the read's no-progress deadline (${deadlineMs} ms) ended it: ${e.code}` }
          : {
              code: 'TRUNCATED',
              why: `the committed read was still waiting after ${OBSERVE_MS} ms, no deadline`,
            },
      );
      t.decisive('up', 1, {
        why: e
          ? `the peer stopped after ${SENT_BODY} of this frame's ${FRAME_LEN} bytes, its socket open; after ${erroredAfterMs} ms without a byte the read ended with ${e.code}`
          : `the peer stopped after ${SENT_BODY} of this frame's ${FRAME_LEN} bytes, its socket open; the read has no deadline and still waited after ${OBSERVE_MS} ms`,
        mark: {
          offset: 0,
          length: partial.length,
          label: `received before the peer stopped (${SENT_BODY} of ${FRAME_LEN} B)`,
        },
      });
    }
    return {
      frameLen: FRAME_LEN,
      bodyBytesReceived: got,
      peerState: 'stopped (SIGSTOP), socket open',
      starvationDeadlineMs: deadlineMs,
      observedMs: Math.round(performance.now() - stoppedAt),
      stillWaiting,
      error: error ? { code: (error as WireError).code, message: (error as WireError).message } : null,
      erroredAfterMs,
    };
  } finally {
    await (trace as SocketTrace | null)?.close();
    await peer.kill();
    await closeServer(server);
  }
}

export const vanishedPeer: Scenario = {
  number: 11,
  findingKind: 'stalled',
  name: 'vanished-peer',
  title: 'A peer that vanishes mid-frame without closing',
  incident: 'WIRE.md 6.2',
  historicalBehaviour: 'lab-only historical behaviour: a committed read with no starvation deadline',
  narrative:
    `A real process sends a ${FRAME_LEN} B frame's length prefix and ${SENT_BODY} B of it, then stops (SIGSTOP): no FIN, no RST. ` +
    `Historical: the committed read has no deadline; after ${OBSERVE_MS} ms it is still waiting (in flodl it hung forever and shutdown hung in join). ` +
    `flodl 0.7: the no-progress deadline (60 s in flodl, ${STARVATION_MS} ms here) ends the read with STARVED.`,
  async historical(ctx) {
    const ev = await run(ctx, null);
    return { reproduced: ev.stillWaiting && ev.error === null && ev.observedMs >= OBSERVE_MS, evidence: ev };
  },
  async current(ctx) {
    const ev = await run(ctx, STARVATION_MS);
    return {
      held: ev.error?.code === 'STARVED' && ev.erroredAfterMs !== null && ev.erroredAfterMs < OBSERVE_MS,
      evidence: ev,
    };
  },
};
