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
import { linkIdOf, traceLinkOf, type ConnEndpoints } from './link-naming';
import { StreamDecoder, type DecodedUnit } from './stream-decoder';

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
  onUnit(link: TraceLink, u: DecodedUnit): void;
  onClose?(link: TraceLink | null, by: 'client' | 'server', reset: boolean, t: number): void;
  onLog?(level: 'info' | 'warn' | 'error', message: string): void;
}

interface Queued {
  dir: Direction;
  chunk: Uint8Array | null;
  gap: number;
  t: number;
}

/** One proxied connection: two sockets and the decoder beside them. */
class TappedConnection {
  readonly decoder: StreamDecoder;
  private link: TraceLink | null = null;
  private held: DecodedUnit[] = [];
  private queue: Queued[] = [];
  private queued = 0;
  private dropped: Record<Direction, number> = { up: 0, down: 0 };
  private scheduled = false;
  private decoding = true;
  private lastByte: Record<Direction, number>;
  private stallReported: Record<Direction, boolean> = { up: false, down: false };
  private readonly stallTimer: NodeJS.Timeout;
  private closedBy: 'client' | 'server' | null = null;

  constructor(
    readonly index: number,
    private readonly o: TapProxyOptions,
    private readonly ends: ConnEndpoints,
    private readonly now: () => number,
  ) {
    this.decoder = new StreamDecoder({
      mac: o.mac,
      ceiling: o.ceiling,
      controlVersion: o.controlVersion,
      indexTable: o.indexTable,
      snapLen: o.snapLen,
      onUnit: (u) => this.unit(u),
    });
    const t = now();
    this.lastByte = { up: t, down: t };
    const stallMs = o.stallMs ?? 10_000;
    this.stallTimer = setInterval(() => this.checkStall(stallMs), Math.max(50, stallMs / 4));
    this.stallTimer.unref();
  }

  /** Called from the forwarding path: O(1), never throws. */
  observe(dir: Direction, chunk: Uint8Array): void {
    const t = this.now();
    this.lastByte[dir] = t;
    this.stallReported[dir] = false;
    if (!this.decoding) return;
    if (this.queued + chunk.length > (this.o.maxQueuedBytes ?? 64 * 1024 * 1024)) {
      this.dropped[dir] += chunk.length;
      return;
    }
    if (this.dropped[dir] > 0) {
      this.queue.push({ dir, chunk: null, gap: this.dropped[dir], t });
      this.dropped[dir] = 0;
    }
    this.queue.push({ dir, chunk, gap: 0, t });
    this.queued += chunk.length;
    this.schedule();
  }

  ended(dir: Direction, by: 'client' | 'server', reset: boolean): void {
    const t = this.now();
    if (this.decoding) this.queue.push({ dir, chunk: null, gap: -1, t });
    this.schedule();
    if (this.closedBy === null) {
      this.closedBy = by;
      this.afterQueue(() => this.o.onClose?.(this.resolveLink(true), by, reset, t));
    }
  }

  dispose(): void {
    clearInterval(this.stallTimer);
  }

  /** The tap is closing: decode everything still queued now. */
  flush(): void {
    for (const dir of ['up', 'down'] as const) this.queue.push({ dir, chunk: null, gap: -1, t: this.now() });
    this.drain(Infinity);
  }

  private afterQueue(fn: () => void): void {
    this.queue.push({ dir: 'up', chunk: null, gap: -2, t: 0 });
    this.pendingCallbacks.push(fn);
    this.schedule();
  }
  private pendingCallbacks: (() => void)[] = [];

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.drain());
  }

  private drain(sliceMs = this.o.sliceMs ?? 4): void {
    this.scheduled = false;
    const deadline = performance.now() + sliceMs;
    while (this.queue.length > 0 && performance.now() < deadline) {
      const q = this.queue.shift()!;
      if (q.gap === -2) {
        this.pendingCallbacks.shift()?.();
        continue;
      }
      if (!this.decoding) continue;
      try {
        if (q.chunk) {
          this.queued -= q.chunk.length;
          this.decoder.push(q.dir, q.chunk, q.t);
        } else if (q.gap > 0) this.decoder.gap(q.dir, q.gap, q.t, 'not decoded: the decoder fell behind');
        else this.decoder.end(q.dir, q.t);
      } catch (e) {
        // A decoder bug must not reach the proxy: stop decoding this connection only.
        this.decoding = false;
        this.queue = this.queue.filter((x) => x.gap === -2);
        this.queued = 0;
        this.o.onLog?.('error', `tap connection ${this.index}: decoding stopped: ${(e as Error).message}`);
      }
    }
    if (this.queue.length > 0) this.schedule();
  }

  private checkStall(stallMs: number): void {
    for (const dir of ['up', 'down'] as const) {
      const p = this.decoder.partial(dir);
      if (!p || this.stallReported[dir] || this.now() - this.lastByte[dir] < stallMs) continue;
      this.stallReported[dir] = true;
      const message = `no bytes for ${stallMs} ms inside a ${p.kind} unit (${p.got} of ${p.total} bytes)`;
      this.unit({
        t: this.now(),
        dir,
        layer: p.kind,
        kind: 'stalled',
        length: p.total,
        bytes: new Uint8Array(0),
        verdict: 'stalled',
        code: 'STARVED',
        message,
        summary: `stalled: ${message}`,
      });
    }
  }

  private resolveLink(force: boolean): TraceLink | null {
    if (this.link) return this.link;
    let id = linkIdOf(this.decoder, this.o.name);
    if (!id && !force) return null;
    id ??= `${this.o.name ?? `tap${this.o.listenPort}`}.conn${this.index}`;
    this.link = traceLinkOf(id, this.decoder, this.ends);
    return this.link;
  }

  private unit(u: DecodedUnit): void {
    // Hold the first units (a channel magic) until the link's name is known (its Hello or handshake).
    const link = this.resolveLink(this.held.length >= 4 || u.verdict !== 'ok');
    if (!link) {
      this.held.push(u);
      return;
    }
    for (const h of this.held.splice(0)) this.o.onUnit(link, h);
    this.o.onUnit(link, u);
  }
}

export class TapProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly conns = new Set<TappedConnection>();
  private nextIndex = 0;
  readonly now: () => number;

  private constructor(private readonly o: TapProxyOptions) {
    const t0 = performance.now();
    this.now = o.now ?? (() => performance.now() - t0);
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

  private accept(client: net.Socket): void {
    const index = this.nextIndex++;
    const upstream = net.connect({
      host: this.o.upstreamHost,
      port: this.o.upstreamPort,
      allowHalfOpen: true,
    });
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.setNoDelay(true);
      s.on('close', () => this.sockets.delete(s));
    }
    const conn = new TappedConnection(
      index,
      this.o,
      {
        clientAddr: client.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1',
        clientPort: client.remotePort ?? 0,
        serverAddr: this.o.upstreamHost,
        serverPort: this.o.upstreamPort,
      },
      this.now,
    );
    this.conns.add(conn);
    upstream.once('connect', () => client.resume());
    this.forward(client, upstream, 'up', conn, 'client');
    this.forward(upstream, client, 'down', conn, 'server');
    let closed = 0;
    const onClose = () => {
      if (++closed === 2) {
        conn.dispose();
        this.conns.delete(conn);
      }
    };
    client.on('close', onClose);
    upstream.on('close', onClose);
  }

  /** src -> dst: write at once, pause src while dst is full, pass FIN and RST on. */
  private forward(
    src: net.Socket,
    dst: net.Socket,
    dir: Direction,
    conn: TappedConnection,
    side: 'client' | 'server',
  ): void {
    src.on('data', (chunk: Buffer) => {
      if (!dst.destroyed && dst.writable && !dst.write(chunk)) src.pause();
      conn.observe(dir, chunk);
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
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
