// The single writer's bounded queue: 64 records, then the producer must wait
// for room, which only comes as the peer drains the socket (backpressure).
import net from 'node:net';
import { Duplex } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { closeServer, listen, serverPort } from './conn';
import { OutboundWriter, WRITE_SLICE } from './outbound';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function pair() {
  const server = await listen();
  const accepted = new Promise<net.Socket>((r) => server.once('connection', r));
  const client = net.connect({ port: serverPort(server), host: '127.0.0.1' });
  const peer = await accepted;
  peer.pause();
  cleanups.push(async () => {
    client.destroy();
    peer.destroy();
    await closeServer(server);
  });
  await new Promise((r) => client.once('connect', r));
  return { client, peer };
}

describe('outbound writer', () => {
  it('reports the bound, holds the producer until the peer reads, and delivers every record in order', async () => {
    const { client, peer } = await pair();
    let written = 0;
    const w = new OutboundWriter(client, { onWritten: (n) => (written += n) });
    const record = new Uint8Array(256 * 1024);
    let accepted = 0;
    while (w.enqueue([record])) accepted++;
    // The peer reads nothing: the queue fills to its bound and stays full.
    expect(accepted + 1).toBeGreaterThanOrEqual(63);
    expect(w.full).toBe(true);
    let roomed = false;
    void w.room().then(() => (roomed = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(roomed).toBe(false);
    let received = 0;
    peer.on('data', (c) => (received += c.length));
    peer.resume();
    await w.room();
    await w.idle();
    await expect.poll(() => received, { timeout: 10_000 }).toBe((accepted + 1) * record.length);
    expect(written).toBe(received);
  });

  it('reports a write to a closed peer once', async () => {
    const { client, peer } = await pair();
    const errors: Error[] = [];
    const w = new OutboundWriter(client, { onError: (e) => errors.push(e) });
    peer.destroy();
    client.destroy();
    w.enqueue([new Uint8Array(10)]);
    await w.idle();
    expect(errors.length).toBe(1);
    expect(w.enqueue([new Uint8Array(1)])).toBe(false);
  });
});

describe('outbound writer: a record is sent', () => {
  it('says so only once the kernel took every byte of it (its memory may then be reused)', async () => {
    const { client, peer } = await pair();
    const w = new OutboundWriter(client);
    // Larger than loopback's socket buffers: most of it waits for the peer to read.
    const big = new Uint8Array(32 * 1024 * 1024);
    const sent: string[] = [];
    w.enqueue([new Uint8Array(25), big], () => sent.push('big'));
    w.enqueue([new Uint8Array(10)], () => sent.push('small'));
    await new Promise((r) => setTimeout(r, 200));
    expect(sent).toEqual([]);
    let received = 0;
    peer.on('data', (c) => (received += c.length));
    peer.resume();
    await expect.poll(() => sent, { timeout: 10_000 }).toEqual(['big', 'small']);
    await expect.poll(() => received, { timeout: 10_000 }).toBe(25 + big.length + 10);
  });

  it('says so for every record a failed writer drops, queued or enqueued after the failure', async () => {
    const { client, peer } = await pair();
    const w = new OutboundWriter(client);
    const sent: number[] = [];
    w.enqueue([new Uint8Array(32 * 1024 * 1024)], () => sent.push(0));
    w.enqueue([new Uint8Array(10)], () => sent.push(1));
    await new Promise((r) => setTimeout(r, 50));
    expect(sent).toEqual([]);
    peer.destroy();
    client.destroy();
    await expect.poll(() => [...sent].sort(), { timeout: 5_000 }).toEqual([0, 1]);
    expect(w.enqueue([new Uint8Array(1)], () => sent.push(2))).toBe(false);
    expect(sent).toContain(2);
  });

  it('counts every write of a shaped record (paced parts) before it says so', async () => {
    const calls: number[] = [];
    const pending: (() => void)[] = [];
    // A sink whose writes complete only when the test says: nothing is sent before the last one.
    const sink = new Duplex({
      read() {},
      write(chunk: Buffer, _enc, cb) {
        calls.push(chunk.length);
        pending.push(() => cb());
      },
    });
    const w = new OutboundWriter(sink);
    w.setFault({ dir: 'down', bandwidth: 10_000_000 }, 'down');
    let sent = false;
    w.enqueue([new Uint8Array(50_000)], () => (sent = true));
    // A stream hands over one write at a time: each paced part waits for the one before it.
    for (let total = 0; total < 50_000;) {
      await expect.poll(() => pending.length, { timeout: 5_000 }).toBe(1);
      expect(sent).toBe(false);
      total += calls[calls.length - 1];
      pending.shift()!();
    }
    expect(calls.length).toBeGreaterThan(1);
    await expect.poll(() => sent, { timeout: 2_000 }).toBe(true);
  });
});

describe('outbound writer: one record, one write', () => {
  /** A Duplex that records how its bytes were handed over: single writes or one writev. */
  function recordingSink() {
    const calls: { kind: 'write' | 'writev'; bytes: number[] }[] = [];
    const sink = new Duplex({
      read() {},
      write(chunk: Buffer, _enc, cb) {
        calls.push({ kind: 'write', bytes: [chunk.length] });
        cb();
      },
      writev(chunks, cb) {
        calls.push({ kind: 'writev', bytes: chunks.map((c) => (c.chunk as Buffer).length) });
        cb();
      },
    });
    return { sink, calls };
  }

  it('hands a record of small parts over in one writev, in order, every byte counted', async () => {
    const { sink, calls } = recordingSink();
    let written = 0;
    const w = new OutboundWriter(sink, { onWritten: (n) => (written += n), coalesce: true });
    w.enqueue([new Uint8Array(4), new Uint8Array(17), new Uint8Array(64 * 1024), new Uint8Array(8)]);
    await w.idle();
    expect(calls).toEqual([{ kind: 'writev', bytes: [4, 17, 64 * 1024, 8] }]);
    expect(written).toBe(4 + 17 + 64 * 1024 + 8);
  });

  it('a model-sized record still goes out a slice at a time', async () => {
    const { sink, calls } = recordingSink();
    const w = new OutboundWriter(sink, { coalesce: true });
    w.enqueue([new Uint8Array(25), new Uint8Array(WRITE_SLICE + 10)]);
    await w.idle();
    expect(calls).toEqual([
      { kind: 'write', bytes: [25] },
      { kind: 'write', bytes: [WRITE_SLICE] },
      { kind: 'write', bytes: [10] },
    ]);
  });

  it("keeps each part a write of its own without coalescing (Nagle on: flodl's split writes)", async () => {
    const { sink, calls } = recordingSink();
    const w = new OutboundWriter(sink);
    w.enqueue([new Uint8Array(4), new Uint8Array(100)]);
    await w.idle();
    expect(calls.map((c) => c.kind)).toEqual(['write', 'write']);
  });
});
