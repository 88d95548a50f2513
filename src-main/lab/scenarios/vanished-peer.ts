// WIRE.md 6.2: a peer that vanishes mid-frame without closing (power loss, a
// partition: no FIN, no RST). Here a real process writes a length prefix and
// part of the frame, then stops itself (SIGSTOP): the socket stays open and
// silent. Historical: the committed read has no deadline and waits forever
// (bounded here by a short observation window). flodl 0.7: the committed read's
// no-progress deadline errors STARVED (60 s in flodl; shortened for the lab).
import type { WireError } from '@shared/wire/errors';
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

// The peer: connects, writes the prefix and part of the body, says so, then stops itself.
const PEER = `
const net = require('node:net');
const [port, frameLen, sent] = process.argv.slice(-3).map(Number);
const s = net.connect({ host: '127.0.0.1', port, noDelay: true }, () => {
  const b = Buffer.alloc(4 + sent, 7);
  b.writeUInt32LE(frameLen, 0);
  s.write(b, () => {
    process.stdout.write(JSON.stringify({ wrote: b.length }) + '\\n', () => process.kill(process.pid, 'SIGSTOP'));
  });
});
s.on('error', () => process.exit(1));
`;

async function run(ctx: ScenarioContext, deadlineMs: number | null) {
  const server = await listen('127.0.0.1', 0);
  const accepted = new Promise<Socket>((r) => server.once('connection', r));
  const peer = runScript(PEER, [String(serverPort(server)), String(FRAME_LEN), String(SENT_BODY)]);
  ctx.track(peer.pid);
  let got = 0;
  let error: WireError | null = null;
  let erroredAfterMs: number | null = null;
  try {
    const socket = await accepted;
    socket.on('error', () => {});
    const splitter = new LenFrameReader({
      ceiling: 64 * 1024 * 1024,
      now: () => performance.now(),
      sink: { onStart: () => {}, onChunk: (b) => (got += b.length), onEnd: () => {} },
    });
    socket.on('data', (c: Buffer) => splitter.push(c));
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
    await peer.kill();
    await closeServer(server);
  }
}

export const vanishedPeer: Scenario = {
  number: 11,
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
