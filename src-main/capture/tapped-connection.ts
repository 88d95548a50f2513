// One tapped connection's decoding side: the chunks a tap forwarded, queued
// (bounded) and decoded in short slices between I/O turns by a StreamDecoder,
// the units named once the link is known (its Hello or handshake), stalls
// inside a unit reported. It holds no socket: it runs beside the proxy in the
// same thread, or in the tap's decode worker (tap-decode-worker.ts), which
// keeps all of this off the forwarding path.
import type { Direction } from '@shared/lab/state';
import type { TraceLink } from '../lab/trace/format';
import { linkIdOf, traceLinkOf, type ConnEndpoints } from './link-naming';
import { StreamDecoder, type DecodedUnit } from './stream-decoder';
import type { TapProxyOptions } from './tap-proxy';

/** What a connection's decoder needs of the tap's options (no sockets, no listener). */
export type DecodeOptions = Pick<
  TapProxyOptions,
  | 'mac'
  | 'name'
  | 'ceiling'
  | 'controlVersion'
  | 'indexTable'
  | 'snapLen'
  | 'maxQueuedBytes'
  | 'sliceMs'
  | 'stallMs'
  | 'listenPort'
  | 'onUnit'
  | 'onClose'
  | 'onLog'
>;

interface Queued {
  dir: Direction;
  chunk: Uint8Array | null;
  gap: number;
  t: number;
}

/** One proxied connection: two sockets and the decoder beside them. */
export class TappedConnection {
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
    private readonly o: DecodeOptions,
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

  /** Called from the forwarding path: O(1), never throws. `t`: when the tap forwarded it (default now). */
  observe(dir: Direction, chunk: Uint8Array, t = this.now()): void {
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

  ended(dir: Direction, by: 'client' | 'server', reset: boolean, t = this.now()): void {
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

  /** Bytes the forwarding path dropped before they reached this side (the worker's channel was full): a gap. */
  lost(dir: Direction, bytes: number, t = this.now()): void {
    if (!this.decoding || bytes <= 0) return;
    this.queue.push({ dir, chunk: null, gap: bytes, t });
    this.schedule();
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
