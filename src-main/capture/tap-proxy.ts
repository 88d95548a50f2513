// The live tap: a transparent TCP proxy between a flodl peer and its
// upstream (a relay and the controller, a rank and its relay). Every byte is
// written on at once, unchanged and in order, from the socket's own data
// event; the far side's backpressure pauses the near side (and the reverse);
// a FIN is passed on as a FIN and a reset as a reset. Decoding is on the
// side: the chunks are queued (bounded per connection) and decoded in short
// slices between I/O turns, so a slow or failing decoder drops its own
// backlog (reported as a gap, then it resynchronises) or stops decoding that
// connection, and never holds a byte of the forwarding.
import net from 'node:net';
import type { Direction } from '@shared/lab/state';
import type { ControlIndexTable } from '@shared/wire/control-msg-tables';
import type { Mac } from '@shared/wire/mac';
import type { TraceLink } from '../lab/trace/format';
import type { DecodedUnit } from './stream-decoder';
import type { ConnEndpoints } from './link-naming';
import { TappedConnection } from './tapped-connection';
import { ownBuffer, rewrapWithOwnBuffer, type OnBytes } from './own-buffer-reads';
import { DecodeWorker, decodeWorkerPath, type DecodeSide } from './decode-worker-client';

export interface TapProxyOptions {
  listenHost?: string;
  listenPort: number;
  upstreamHost: string;
  upstreamPort: number;
  mac: Mac;
  /** Link name prefix, e.g. "h0.uplink" (the channel is appended). */
  name?: string;
  ceiling?: number;
  controlVersion?: number;
  indexTable?: ControlIndexTable;
  snapLen?: number;
  /** Decoder backlog per connection before it drops bytes (default 64 MiB). */
  maxQueuedBytes?: number;
  /** Decode time per event-loop turn (default 4 ms). */
  sliceMs?: number;
  /** Silence inside a unit after which a stall is reported (default 10 s). */
  stallMs?: number;
  /** Milliseconds since the tap started (default performance.now based). */
  now?: () => number;
  /**
   * Decode in the tap's own thread instead of its decode worker (tests of the decoder's pacing;
   * also what happens when the worker's bundle is missing or it dies).
   */
  decodeInline?: boolean;
  /**
   * Forward only, decoding nothing: a bare hop, the floor the bench measures the tap's own cost
   * against (what any user-space hop costs on this machine).
   */
  forwardOnly?: boolean;
  onUnit(link: TraceLink, u: DecodedUnit): void;
  onClose?(link: TraceLink | null, by: 'client' | 'server', reset: boolean, t: number): void;
  onLog?(level: 'info' | 'warn' | 'error', message: string): void;
}

export class TapProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly conns = new Set<TappedConnection>();
  private readonly sides = new Set<DecodeSide>();
  private worker: DecodeWorker | null = null;
  private readonly epochT0: number;
  private nextIndex = 0;
  readonly now: () => number;

  private constructor(private readonly o: TapProxyOptions) {
    const t0 = performance.now();
    this.now = o.now ?? (() => performance.now() - t0);
    this.epochT0 = performance.timeOrigin + t0;
    const file = o.decodeInline || o.now || o.forwardOnly ? null : decodeWorkerPath();
    if (file)
      try {
        this.worker = new DecodeWorker(file, this.now, (why) => {
          this.worker = null;
          o.onLog?.('warn', `tap: ${why}; decoding new connections in the forwarding thread`);
        });
      } catch (e) {
        o.onLog?.(
          'warn',
          `tap: no decode worker (${(e as Error).message}); decoding in the forwarding thread`,
        );
      }
    this.server = net.createServer({ allowHalfOpen: true, pauseOnConnect: true }, (c) => this.accept(c));
  }

  static async start(o: TapProxyOptions): Promise<TapProxy> {
    const tap = new TapProxy(o);
    await new Promise<void>((resolve, reject) => {
      tap.server.once('error', reject);
      tap.server.listen(o.listenPort, o.listenHost ?? '127.0.0.1', () => {
        tap.server.off('error', reject);
        resolve();
      });
    });
    tap.server.on('error', (e) => o.onLog?.('error', `tap: ${e.message}`));
    return tap;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  get connectionCount(): number {
    return this.conns.size;
  }

  private accept(accepted: net.Socket): void {
    const index = this.nextIndex++;
    // Both sockets read into a buffer of their own, reused (own-buffer-reads.ts); the bytes are
    // handed on before the next read, copied only where a write has to wait for them.
    let toUpstream: OnBytes | null = null;
    let toClient: OnBytes | null = null;
    const client =
      rewrapWithOwnBuffer(accepted, this.server, (b) => toUpstream!(b), { allowHalfOpen: true }) ?? accepted;
    const upstream = net.connect({
      host: this.o.upstreamHost,
      port: this.o.upstreamPort,
      allowHalfOpen: true,
      onread: ownBuffer((b) => toClient!(b)),
    });
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.setNoDelay(true);
      s.on('close', () => this.sockets.delete(s));
    }
    const ends = {
      clientAddr: client.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1',
      clientPort: client.remotePort ?? 0,
      serverAddr: this.o.upstreamHost,
      serverPort: this.o.upstreamPort,
    };
    const conn = this.decodeSide(index, ends);
    upstream.once('connect', () => client.resume());
    toUpstream = this.forward(client, upstream, 'up', conn, 'client');
    toClient = this.forward(upstream, client, 'down', conn, 'server');
    let closed = 0;
    const onClose = () => {
      if (++closed === 2) {
        conn.dispose();
        this.sides.delete(conn);
        if (conn instanceof TappedConnection) this.conns.delete(conn);
      }
    };
    client.on('close', onClose);
    upstream.on('close', onClose);
  }

  /** Where a connection's bytes are decoded: the decode worker, or this thread when it has none. */
  private decodeSide(index: number, ends: ConnEndpoints): DecodeSide {
    const o = this.o;
    let side: DecodeSide;
    if (o.forwardOnly) side = { copiesChunks: true, observe: () => {}, ended: () => {}, dispose: () => {} };
    else if (this.worker && !this.worker.dead) {
      side = this.worker.open(
        index,
        {
          salt: o.mac.salt,
          name: o.name,
          ceiling: o.ceiling,
          controlVersion: o.controlVersion,
          indexTable: o.indexTable,
          snapLen: o.snapLen,
          maxQueuedBytes: o.maxQueuedBytes,
          sliceMs: o.sliceMs,
          stallMs: o.stallMs,
          listenPort: o.listenPort,
          epochT0: this.epochT0,
        },
        ends,
        { onUnit: o.onUnit, onClose: o.onClose, onLog: o.onLog },
        o.maxQueuedBytes ?? 64 * 1024 * 1024,
      );
    } else {
      const conn = new TappedConnection(index, o, ends, this.now);
      this.conns.add(conn);
      side = conn;
    }
    this.sides.add(side);
    return side;
  }

  /**
   * src -> dst: write at once, pause src while dst is full, pass FIN and RST on. Returns what src's
   * own-buffer reads call (a socket read the usual way gets the same through its data event).
   */
  private forward(
    src: net.Socket,
    dst: net.Socket,
    dir: Direction,
    conn: DecodeSide,
    side: 'client' | 'server',
  ): OnBytes {
    const pass = (chunk: Buffer, reused: boolean): boolean => {
      let more = true;
      if (!dst.destroyed && dst.writable) {
        // A reused buffer may not wait in dst's queue: copy it if anything is queued already,
        // and pause when the kernel took only part of it (the rest still points into the buffer).
        if (reused && dst.writableLength > 0) more = dst.write(Buffer.from(chunk));
        else if (reused) {
          // Resumed by this write's own completion: a write under the high-water mark that had
          // to wait is followed by no drain event.
          let waiting = false;
          more = dst.write(chunk, () => {
            if (waiting) src.resume();
          });
          if (dst.writableLength > 0) {
            waiting = true;
            more = false;
          }
        } else more = dst.write(chunk);
      }
      conn.observe(dir, reused && !conn.copiesChunks ? Buffer.from(chunk) : chunk);
      return more;
    };
    src.on('data', (chunk: Buffer) => {
      if (!pass(chunk, false)) src.pause();
    });
    dst.on('drain', () => src.resume());
    src.on('end', () => {
      conn.ended(dir, side, false);
      if (!dst.destroyed) dst.end();
    });
    src.on('error', (e: NodeJS.ErrnoException) => {
      const reset = e.code === 'ECONNRESET' || e.code === 'ECONNREFUSED' || e.code === 'EPIPE';
      conn.ended(dir, side, reset);
      if (dst.destroyed) return;
      if (reset) dst.resetAndDestroy();
      else dst.destroy();
    });
    src.on('close', () => {
      // Both halves done on src: once dst has nothing left to send back, close it too.
      if (!dst.destroyed && dst.writableEnded && dst.readableEnded) dst.destroy();
    });
    return (view) => pass(view, true);
  }

  /**
   * Stops accepting connections; those already open are forwarded as before
   * until their peers end them (no reset, no lost byte). Resolves when the
   * last one has closed.
   */
  stopListening(): Promise<void> {
    return new Promise<void>((r) => this.server.close(() => r()));
  }

  /** Ends everything now: the listener and every open connection (their peers see them cut). */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    for (const c of this.conns) {
      c.flush();
      c.dispose();
    }
    if (this.worker) {
      // Every unit of what was forwarded reaches onUnit before close resolves, as inline.
      await this.worker.flush();
      await this.worker.terminate();
      this.worker = null;
    }
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
