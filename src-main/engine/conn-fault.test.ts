// A link fault on what a connection reads delays and slices the bytes, and
// must never reorder them: a reader that got a later piece before an earlier
// one would see a corrupt frame (a fold error that loses the whole host).
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Conn, closeServer, listen, serverPort } from './conn';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function readEnd(): Promise<{ conn: Conn; client: net.Socket }> {
  const server = await listen();
  const accepted = new Promise<net.Socket>((r) => server.once('connection', r));
  const client = net.connect({ port: serverPort(server), host: '127.0.0.1' });
  const socket = await accepted;
  const conn = new Conn(socket, { readDir: 'up' });
  cleanups.push(async () => {
    client.destroy();
    conn.destroy();
    await closeServer(server);
  });
  return { conn, client };
}

function collect(conn: Conn, want: number): Promise<Buffer> {
  const got: Uint8Array[] = [];
  let n = 0;
  return new Promise((resolve) => {
    conn.setConsumer((c) => {
      got.push(c);
      n += c.length;
      if (n >= want) resolve(Buffer.concat(got));
    });
  });
}

describe('conn: inbound link faults', () => {
  it('latency with jitter keeps the byte order when reads land in one event-loop turn', async () => {
    const { conn } = await readEnd();
    conn.setFault({ dir: 'up', latencyMs: 3, jitterMs: 3, sliceBytes: 100 });
    // Every other read draws a latency just over 5 ms, the reads between draw
    // 3 ms: those are due when the read before them is (the link keeps order),
    // a few microseconds later in time, so their delay is just under 5 ms.
    // Node timers count whole milliseconds: 4 ms fires before 5 ms.
    let draw = 0;
    vi.spyOn(Math, 'random').mockImplementation(() => (draw++ % 2 === 0 ? 2.001 / 3 : 0));
    const reads = Array.from({ length: 10 }, (_, i) => Buffer.alloc(100, i + 1));
    const out = collect(conn, 1000);
    // Several socket reads in one turn (libuv hands up to 32 reads of one socket to one poll phase).
    for (const r of reads) conn.socket.emit('data', r);
    expect(await out).toEqual(Buffer.concat(reads));
  });

  it('clearing a fault while pieces are still delayed does not let new bytes overtake them', async () => {
    const { conn, client } = await readEnd();
    conn.setFault({ dir: 'up', latencyMs: 50 });
    const out = collect(conn, 6);
    conn.socket.emit('data', Buffer.from([1, 2, 3]));
    conn.setFault(null);
    client.write(Buffer.from([4, 5, 6]));
    expect([...(await out)]).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("a delayed link delays the peer's close too: its last bytes come before the close", async () => {
    const { conn, client } = await readEnd();
    conn.setFault({ dir: 'up', latencyMs: 30 });
    const got: number[] = [];
    conn.setConsumer((c) => got.push(...c));
    const closedAfter = new Promise<number[]>((r) => conn.onClose(() => r([...got])));
    client.end(Buffer.from([7, 8, 9]));
    expect(await closedAfter).toEqual([7, 8, 9]);
  });
});
