// The accepted socket re-wrapped to read into the tap's own buffer: this Node
// still has what it leans on (a null here means every tapped read allocates
// again), bytes arrive whole and in order through the callback, backpressure
// by returning false holds, and the server's close still waits for it.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { rewrapWithOwnBuffer } from './own-buffer-reads';

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

async function serverWith(onSocket: (s: net.Socket, server: net.Server) => void) {
  const server = net.createServer({ pauseOnConnect: true, allowHalfOpen: true }, (s) => onSocket(s, server));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as net.AddressInfo).port };
}

describe('rewrapWithOwnBuffer', () => {
  it('reads into one reused buffer, whole and in order, pausing when told to', async () => {
    const sent = Buffer.alloc(3 * 1024 * 1024).map((_, i) => (i * 31) & 0xff);
    const got: Buffer[] = [];
    const views = new Set<ArrayBufferLike>();
    let wrapped: net.Socket | null = null;
    let reads = 0;
    const ended = new Promise<void>((resolve) => {
      void serverWith((accepted, server) => {
        wrapped = rewrapWithOwnBuffer(
          accepted,
          server,
          (view) => {
            views.add(view.buffer);
            got.push(Buffer.from(view)); // the view is valid only until we return
            // Pause every 5th read and resume a little later: no byte may be lost or reordered.
            if (++reads % 5 === 0) {
              setTimeout(() => wrapped!.resume(), 2);
              return false;
            }
            return true;
          },
          { allowHalfOpen: true },
        );
        wrapped!.on('end', () => resolve());
        wrapped!.resume();
        cleanups.push(() => server.close());
      }).then(({ port }) => {
        const c = net.connect(port, '127.0.0.1', () => c.end(sent));
        cleanups.push(() => c.destroy());
      });
    });
    await ended;
    expect(wrapped).not.toBeNull();
    expect(Buffer.concat(got).equals(sent)).toBe(true);
    expect(views.size).toBe(1);
  });

  it("keeps the server's count of open connections: its close waits for the socket, then ends", async () => {
    let wrapped: net.Socket | null = null;
    const { server, port } = await serverWith((accepted, srv) => {
      wrapped = rewrapWithOwnBuffer(accepted, srv, () => true, { allowHalfOpen: false });
      wrapped!.resume();
    });
    const c = net.connect(port, '127.0.0.1');
    await new Promise((r) => c.once('connect', r));
    while (!wrapped) await new Promise((r) => setTimeout(r, 5));
    let closed = false;
    const closing = new Promise<void>((r) => server.close(() => ((closed = true), r())));
    await new Promise((r) => setTimeout(r, 50));
    expect(closed).toBe(false);
    (wrapped as net.Socket).destroy();
    await closing;
    expect(closed).toBe(true);
    c.destroy();
  });
});
