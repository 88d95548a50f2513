// A raw peer for tests, over TCP or an in-memory pair: writes exact bytes and
// reads back whole units (mux records, len-framed blobs, fixed-size
// handshakes), so the engine's roles can be tested against an independent
// implementation of the framing.
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { readU32LE } from '@shared/wire/bytes';
import { MUX_HEADER_LEN } from '@shared/wire/constants';

export class RawPeer {
  private buf = Buffer.alloc(0);
  private waiter: (() => void) | null = null;
  closed = false;
  private constructor(readonly socket: Duplex) {
    if (socket instanceof net.Socket) socket.setNoDelay(true);
    socket.on('data', (c) => {
      this.buf = Buffer.concat([this.buf, c]);
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => {});
  }

  static connect(port: number, host = '127.0.0.1'): Promise<RawPeer> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ port, host }, () => resolve(new RawPeer(s)));
      s.once('error', reject);
    });
  }

  static wrap(socket: Duplex): RawPeer {
    return new RawPeer(socket);
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  write(...parts: Uint8Array[]): void {
    for (const p of parts) this.socket.write(p);
  }

  /** Waits for n bytes; null when the peer closed first. */
  async read(n: number): Promise<Uint8Array | null> {
    while (this.buf.length < n) {
      if (this.closed) return null;
      await new Promise<void>((r) => (this.waiter = r));
    }
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return new Uint8Array(out);
  }

  /** One whole mux record (header + payload), or null on close. */
  async readMux(): Promise<Uint8Array | null> {
    const h = await this.read(MUX_HEADER_LEN);
    if (!h) return null;
    const body = await this.read(readU32LE(h, 13));
    if (!body) return null;
    return Buffer.concat([h, body]);
  }

  /** One len-framed blob's body, or null on close. */
  async readLenFramed(): Promise<Uint8Array | null> {
    const p = await this.read(4);
    if (!p) return null;
    return this.read(readU32LE(p, 0));
  }

  /** Resolves when the peer has closed the connection. */
  async closedByPeer(): Promise<void> {
    while (!this.closed) await new Promise<void>((r) => (this.waiter = r));
  }

  end(): void {
    this.socket.end();
  }
  destroy(): void {
    this.socket.destroy();
  }
}
