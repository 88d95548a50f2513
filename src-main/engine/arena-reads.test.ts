// Reads into the receive arena on real loopback sockets: the runtime still
// offers the user-buffer mode to accepted sockets (this pins it, so an
// upgrade cannot silently lose the fast path), bytes arrive intact and in
// order through the arena, every block goes back once the socket closed, a
// full arena falls back to ordinary buffers, and pausing still stops reads.
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createWasmFoldKernel } from '@shared/fold/kernel-wasm';
import type { ReceiveArena } from '@shared/fold/receive-arena';
import { arenaReadsSupported } from './arena-reads';
import { Conn, closeServer, listen, serverPort } from './conn';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A fresh arena of about `blocks` 1 MiB blocks. */
function arenaOf(blocks: number): ReceiveArena {
  const k = createWasmFoldKernel({ arenaBytes: (3 + blocks) << 20 })!;
  const a = k.receiveArena!()!;
  expect(a.blockCount).toBeGreaterThanOrEqual(blocks);
  return a;
}

/** A connected pair: the client socket and the server's accepted one. */
async function pair(): Promise<{ client: net.Socket; accepted: net.Socket }> {
  const server = await listen();
  const accepted = new Promise<net.Socket>((r) => server.once('connection', r));
  const client = net.connect({ port: serverPort(server), host: '127.0.0.1' });
  await new Promise((r) => client.once('connect', r));
  const s = await accepted;
  cleanups.push(async () => {
    client.destroy();
    s.destroy();
    await closeServer(server);
  });
  return { client, accepted: s };
}

const closed = (s: net.Socket) => new Promise((r) => (s.destroyed ? r(null) : s.once('close', r)));

describe('socket reads into the receive arena', () => {
  it('this runtime lets an accepted socket read into a buffer of ours', async () => {
    const { accepted } = await pair();
    expect(arenaReadsSupported(accepted)).toBe(true);
  });

  it('delivers every byte in order as views of arena blocks, and gives every block back on close', async () => {
    const arena = arenaOf(8);
    const { client, accepted } = await pair();
    const conn = new Conn(accepted, { readDir: 'up' });
    expect(conn.readIntoArena(arena)).toBe(true);
    const got: Buffer[] = [];
    let inArena = 0;
    conn.setConsumer((c) => {
      if (arena.contains(c)) inArena++;
      got.push(Buffer.from(c)); // a view is valid during the call only: copied
    });
    const sent = randomBytes(5 << 20);
    for (let o = 0; o < sent.length; o += 100_003) client.write(sent.subarray(o, o + 100_003));
    client.end();
    await closed(accepted);
    expect(Buffer.concat(got).equals(sent)).toBe(true);
    expect(inArena).toBe(got.length);
    expect(conn.bytesArrived).toBe(sent.length);
    expect(arena.blocksInUse).toBe(0);
  });

  it('falls back to ordinary buffers while every block is held, losing nothing', async () => {
    const arena = arenaOf(2);
    const { client, accepted } = await pair();
    const conn = new Conn(accepted, { readDir: 'up' });
    expect(conn.readIntoArena(arena)).toBe(true);
    const got: Buffer[] = [];
    const held: Uint8Array[] = [];
    let outside = 0;
    conn.setConsumer((c) => {
      if (arena.retain(c))
        held.push(c); // keep every block: the arena runs out
      else outside++;
      got.push(Buffer.from(c));
    });
    const sent = randomBytes(6 << 20);
    client.end(sent);
    await closed(accepted);
    expect(Buffer.concat(got).equals(sent)).toBe(true);
    expect(outside).toBeGreaterThan(0);
    expect(held.length).toBeGreaterThan(0);
    for (const c of held) arena.release(c);
    expect(arena.blocksInUse).toBe(0);
  });

  it('bytes that arrive before a consumer, or while paused, are kept (copied) and delivered in order', async () => {
    const arena = arenaOf(4);
    const { client, accepted } = await pair();
    const conn = new Conn(accepted, { readDir: 'up' });
    expect(conn.readIntoArena(arena)).toBe(true);
    const first = randomBytes(300_000);
    client.write(first);
    await new Promise((r) => setTimeout(r, 100)); // read with nobody consuming: held
    const got: Buffer[] = [];
    conn.pause();
    conn.setConsumer((c) => got.push(Buffer.from(c)));
    const second = randomBytes(2 << 20);
    client.end(second);
    await new Promise((r) => setTimeout(r, 100));
    const whilePaused = Buffer.concat(got).length;
    conn.resume();
    await closed(accepted);
    expect(Buffer.concat(got).equals(Buffer.concat([first, second]))).toBe(true);
    // Paused, reads stopped: the held bytes came, the rest waited in the kernel.
    expect(whilePaused).toBeLessThan(first.length + second.length);
    expect(arena.blocksInUse).toBe(0);
  });
});
