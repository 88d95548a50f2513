// The controller's single port (WIRE.md 3.1): every dialer writes a 4-byte
// channel magic first; the dispatcher reads it and hands the connection, with
// every byte read so far, to the subsystem for that channel (which checks the
// magic again as its own first read). Unknown magics, a channel with no
// subsystem, or no magic within the peek deadline: the connection is dropped.
import type { Duplex } from 'node:stream';
import { channelOfMagic, type Channel } from '@shared/wire/channel';
import { Conn } from './conn';

export type ChannelHandler = (conn: Conn, head: Uint8Array) => void;

export interface PortMuxOptions {
  handlers: Partial<Record<Channel, ChannelHandler>>;
  peekTimeoutMs?: number;
  onDrop?: (reason: string, head: Uint8Array) => void;
  stallMs?: number;
  noDelay?: boolean;
}

/** A listening net.Server, or an in-memory stand-in in tests. */
export interface ConnectionSource {
  on(event: 'connection', listener: (socket: Duplex) => void): unknown;
}

export class PortMux {
  private readonly conns = new Set<Conn>();
  constructor(
    readonly server: ConnectionSource,
    private readonly opts: PortMuxOptions,
  ) {
    server.on('connection', (s) => this.accept(s));
  }

  /** Takes one connection (the server's, or an in-memory one in tests). */
  accept(socket: Duplex): void {
    const conn = new Conn(socket, { readDir: 'up', stallMs: this.opts.stallMs, noDelay: this.opts.noDelay });
    this.conns.add(conn);
    conn.onClose(() => this.conns.delete(conn));
    const parts: Uint8Array[] = [];
    let have = 0;
    const timer = setTimeout(
      () => this.drop(conn, 'no channel magic within the peek deadline', Buffer.concat(parts)),
      this.opts.peekTimeoutMs ?? 5000,
    );
    conn.setConsumer((chunk) => {
      parts.push(chunk);
      have += chunk.length;
      if (have < 4) return;
      clearTimeout(timer);
      conn.setConsumer(null);
      const head = Buffer.concat(parts);
      const ch = channelOfMagic(head.subarray(0, 4));
      const handler = ch ? this.opts.handlers[ch] : undefined;
      if (!ch) return this.drop(conn, `unknown channel magic ${head.subarray(0, 4).toString('hex')}`, head);
      if (!handler) return this.drop(conn, `no subsystem for the ${ch} channel`, head);
      handler(conn, head);
    });
    conn.onClose(() => clearTimeout(timer));
  }

  private drop(conn: Conn, reason: string, head: Uint8Array): void {
    this.opts.onDrop?.(reason, head);
    conn.destroy();
  }

  /** Destroys every connection that came through this port. */
  destroyAll(): void {
    for (const c of this.conns) c.destroy();
  }
}
