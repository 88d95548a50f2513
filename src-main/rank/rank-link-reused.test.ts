// A rank's data link on real loopback sockets with reads into one reused
// buffer (net.connect's onread): len-framed blobs sent in odd pieces arrive
// whole and intact, a blob asked for after the previous one reuses its
// memory, and blobs sent out of turn (before the rank asked) each keep their
// own bytes.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeLenPrefix } from '@shared/wire/len-frame';
import { connectWithRetry } from '../engine/conn';
import { ReusedReads } from '../engine/reused-reads';
import { RankLink } from './rank-link';

const CEILING = 1 << 24;
const servers: net.Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A server whose first connection is handed back, and a RankLink dialed to it with reused reads. */
async function linkPair(readBytes?: number): Promise<{ peer: net.Socket; link: RankLink }> {
  let accepted!: (s: net.Socket) => void;
  const peerP = new Promise<net.Socket>((r) => (accepted = r));
  const server = net.createServer((s) => accepted(s)).listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((r) => server.once('listening', r));
  const reads = new ReusedReads(readBytes);
  const socket = await connectWithRetry('127.0.0.1', (server.address() as net.AddressInfo).port, {
    onread: reads.onread,
  });
  const link = new RankLink(socket, CEILING, true, reads);
  const peer = await peerP;
  return { peer, link };
}

function blob(len: number, seed: number): Uint8Array {
  const b = new Uint8Array(len);
  for (let i = 0; i < len; i++) b[i] = (i * 31 + seed * 7) & 0xff;
  return b;
}

/** Writes prefix + blob in pieces of `piece` bytes, each its own write. */
async function sendInPieces(peer: net.Socket, body: Uint8Array, piece: number): Promise<void> {
  const whole = Buffer.concat([encodeLenPrefix(body.length, CEILING), body]);
  for (let o = 0; o < whole.length; o += piece) {
    peer.write(whole.subarray(o, Math.min(whole.length, o + piece)));
    await new Promise((r) => setImmediate(r));
  }
}

describe('RankLink with reused reads', () => {
  it('hands over whole blobs, byte for byte, and reuses memory once the last one was done with', async () => {
    const { peer, link } = await linkPair(4096); // reads far smaller than a blob
    (link as unknown as { startFramed(): void }).startFramed();
    const sizes = [300_000, 1, 70_000, 300_000];
    const buffers: ArrayBufferLike[] = [];
    for (const [k, len] of sizes.entries()) {
      const want = blob(len, k);
      const got = link.next();
      await sendInPieces(peer, want, 65_537);
      const b = await got;
      expect(Buffer.compare(Buffer.from(b), Buffer.from(want))).toBe(0);
      buffers.push(b.buffer);
    }
    // Every blob fit the first one's memory: all four lay in it.
    expect(new Set(buffers).size).toBe(1);
    peer.destroy();
    link.conn.destroy();
  });

  it('keeps every blob intact when several arrive before the rank asks for them', async () => {
    const { peer, link } = await linkPair();
    (link as unknown as { startFramed(): void }).startFramed();
    const first = await (async () => {
      const p = link.next();
      await sendInPieces(peer, blob(200_000, 1), 50_000);
      return p;
    })();
    // Out of turn: three blobs while `first` is still being read by the rank.
    const wants = [blob(200_000, 2), blob(150_000, 3), blob(200_000, 4)];
    for (const w of wants) await sendInPieces(peer, w, 100_000);
    await new Promise((r) => setTimeout(r, 20));
    expect(Buffer.compare(Buffer.from(first), Buffer.from(blob(200_000, 1)))).toBe(0);
    for (const w of wants) {
      const b = await link.next();
      expect(Buffer.compare(Buffer.from(b), Buffer.from(w))).toBe(0);
    }
    peer.destroy();
    link.conn.destroy();
  });
});
