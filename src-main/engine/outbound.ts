// The single writer of one socket (WIRE.md 4.7): every record for the socket
// goes through this queue, so records never interleave. The queue is bounded
// (64 records, WIRE.md 6.5): a producer that finds it full waits for room,
// which brings TCP backpressure back to whoever feeds it.
import type { Duplex } from 'node:stream';
import { OUTBOUND_QUEUE_BOUND } from '@shared/wire/constants';
import type { Direction } from '@shared/lab/state';
import { SHAPER_EARLY_MS, Shaper, corrupt, shaperTimerMs, type LinkFault } from './link-fault';

/** Largest piece handed to the socket in one event-loop turn. */
export const WRITE_SLICE = 1 << 20;

export interface OutboundOptions {
  bound?: number;
  /** Bytes handed to the kernel (counted in the write callback). */
  onWritten?: (n: number) => void;
  /** The first write failure (later ones are not reported). */
  onError?: (err: Error) => void;
  /** A write that cannot drain for this long is a failure (the write-stall timeout). */
  stallMs?: number;
  /**
   * A record that fits one write slice goes to the kernel in one writev. Only with TCP_NODELAY
   * on: with Nagle on (the historical incident, WIRE.md 6.10) flodl's split writes, header then
   * payload, are what waits for the delayed ACK, so each part stays a write of its own.
   */
  coalesce?: boolean;
}

export class WriterClosedError extends Error {
  override readonly name = 'WriterClosedError';
}

/**
 * One queued record and who wants to know when its bytes are gone: `onSent`
 * runs once the kernel took every write of it (each write's callback ran) or
 * the record was dropped (a failed writer), so memory its parts are views of
 * may be reused from then on. A write still in libuv's hands holds its buffer.
 */
interface QueuedRecord {
  parts: Uint8Array[];
  onSent?: () => void;
  /** Writes handed to the socket whose callbacks have not run, plus one while the record is still being written. */
  pending: number;
}

function settle(rec: QueuedRecord): void {
  if (--rec.pending > 0) return;
  const f = rec.onSent;
  rec.onSent = undefined;
  f?.();
}

export class OutboundWriter {
  private readonly queue: QueuedRecord[] = [];
  /** The record being written (its writes are counted against it). */
  private current: QueuedRecord | null = null;
  private readonly bound: number;
  private draining = false;
  private failed: Error | null = null;
  private closed = false;
  private roomWaiters: (() => void)[] = [];
  private fault: LinkFault | null = null;
  private shaper: Shaper | null = null;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly socket: Duplex,
    private readonly opts: OutboundOptions = {},
  ) {
    this.bound = opts.bound ?? OUTBOUND_QUEUE_BOUND;
    socket.on('error', (e) => this.fail(e));
    socket.on('close', () => this.fail(new WriterClosedError('socket closed')));
  }

  /** A link fault on what this writer sends (null clears it); `dir`: the way it sends (for a shared lane). */
  setFault(fault: LinkFault | null, dir?: Direction): void {
    this.fault = fault ? { ...fault } : null;
    this.shaper = fault ? new Shaper(fault, dir) : null;
  }

  get size(): number {
    return this.queue.length;
  }
  get error(): Error | null {
    return this.failed;
  }
  get full(): boolean {
    return this.queue.length >= this.bound;
  }

  /**
   * Queues one record; its parts go out as separate writes in order (one part
   * for small records, header + payload for model-sized ones). Returns false
   * when the queue has reached its bound: wait for `room()` before the next.
   * A record for a failed socket is dropped (the failure was reported once).
   * `onSent` runs once the record's bytes are all with the kernel, or it was
   * dropped: from then on nothing reads its parts' memory.
   */
  enqueue(parts: Uint8Array[], onSent?: () => void): boolean {
    if (this.failed || this.closed) {
      onSent?.();
      return false;
    }
    this.queue.push({ parts, onSent, pending: 1 });
    if (!this.draining) void this.drain();
    return this.queue.length < this.bound;
  }

  /** Resolves when the queue is below its bound (or the writer failed). */
  room(): Promise<void> {
    if (this.queue.length < this.bound || this.failed) return Promise.resolve();
    return new Promise((r) => this.roomWaiters.push(r));
  }

  /** Resolves when everything queued was handed to the socket (or the writer failed). */
  idle(): Promise<void> {
    if ((this.queue.length === 0 && !this.draining) || this.failed) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  /**
   * Nothing queued, nothing being written, and the socket holds no bytes for
   * the kernel: a buffer handed over earlier is no longer referenced by any write.
   */
  get flushed(): boolean {
    return this.queue.length === 0 && !this.draining && this.socket.writableLength === 0;
  }

  /** Drains what is queued, then half-closes the socket. */
  async end(): Promise<void> {
    await this.idle();
    this.closed = true;
    if (!this.failed && !this.socket.destroyed) this.socket.end();
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0 && !this.failed) {
        const rec = this.queue.shift()!;
        // The record's writes are counted against it (write() reads `current`); it settles once the
        // last write's callback ran. Writes that complete at once keep the loop synchronous.
        this.current = rec;
        try {
          let parts = rec.parts;
          this.wakeRoom();
          if (this.fault) {
            parts = await this.faulted(parts);
            if (parts.length === 0) continue;
          }
          // A record that fits one write slice goes to the kernel in one writev: a rank's frame
          // was five writes (prefix, header, tensor metadata, data, footer), a fan-out two, each its
          // own TCP segment with TCP_NODELAY and its own wakeup of the reader for a few bytes.
          if (
            this.opts.coalesce &&
            parts.length > 1 &&
            parts.reduce((a, p) => a + p.length, 0) <= WRITE_SLICE
          ) {
            if (!this.writeCorked(parts)) await this.waitDrain();
            continue;
          }
          for (const whole of parts) {
            // A model-sized part goes out in slices, one per event-loop turn, so
            // handing it to the kernel never blocks the loop for long.
            for (let o = 0; o < whole.length || (o === 0 && whole.length === 0); o += WRITE_SLICE) {
              if (this.failed) break;
              const p =
                whole.length > WRITE_SLICE
                  ? whole.subarray(o, Math.min(whole.length, o + WRITE_SLICE))
                  : whole;
              if (!this.write(p)) await this.waitDrain();
              else if (whole.length > WRITE_SLICE) await new Promise((r) => setImmediate(r));
              if (whole.length <= WRITE_SLICE) break;
            }
          }
        } finally {
          this.current = null;
          settle(rec);
        }
      }
    } finally {
      this.draining = false;
      this.wakeRoom();
      if (this.queue.length === 0 || this.failed) {
        const w = this.idleWaiters;
        this.idleWaiters = [];
        for (const f of w) f();
      }
    }
  }

  /** Writes every part while the socket is corked (one writev on uncork); false when the socket's buffer is full. */
  private writeCorked(parts: Uint8Array[]): boolean {
    let ok = true;
    this.socket.cork();
    try {
      for (const p of parts) {
        if (this.failed) break;
        ok = this.write(p);
      }
    } finally {
      this.socket.uncork();
    }
    return ok;
  }

  /** Applies the link fault to one record: blackhole, corruption, the mid-frame stall, shaping. */
  private async faulted(parts: Uint8Array[]): Promise<Uint8Array[]> {
    const f = this.fault!;
    if (f.blackhole) return [];
    if (f.corruptNext) {
      f.corruptNext = false;
      parts = [...parts.slice(0, -1), corrupt(parts[parts.length - 1])];
    }
    if (f.stallMs && f.stallMs > 0) {
      // Write the first bytes of the record (its header), then stall mid-frame.
      const first = parts[0];
      const cut = Math.min(25, Math.max(1, first.length - 1));
      await this.writeShaped(first.subarray(0, cut));
      await new Promise((r) => setTimeout(r, f.stallMs));
      parts = [first.subarray(cut), ...parts.slice(1)];
    }
    if (this.shaper?.shapes) {
      for (const p of parts) await this.writeShaped(p);
      return [];
    }
    return parts;
  }

  private async writeShaped(bytes: Uint8Array): Promise<void> {
    const pieces = this.shaper?.shapes ? this.shaper.plan(bytes, performance.now()) : [{ at: 0, bytes }];
    for (const { at, bytes: piece } of pieces) {
      const wait = at - performance.now();
      // Due within a timer's resolution: written now (SHAPER_EARLY_MS says why).
      if (wait >= SHAPER_EARLY_MS) await new Promise((r) => setTimeout(r, shaperTimerMs(wait)));
      if (this.failed) return;
      if (!this.write(piece)) await this.waitDrain();
    }
  }

  /** Hands one part to the socket; its bytes are counted once the kernel took them. False when the socket's buffer is full. */
  private write(part: Uint8Array): boolean {
    const n = part.length;
    const rec = this.current;
    if (rec) rec.pending++;
    return this.socket.write(part, (err) => {
      if (err) this.fail(err);
      else this.opts.onWritten?.(n);
      if (rec) settle(rec);
    });
  }

  private waitDrain(): Promise<void> {
    return new Promise((resolve) => {
      const stallMs = this.opts.stallMs;
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        if (timer) clearTimeout(timer);
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
      if (stallMs) {
        timer = setTimeout(() => {
          this.fail(new Error(`write stalled for ${stallMs} ms`));
          done();
        }, stallMs);
      }
    });
  }

  private wakeRoom(): void {
    if (this.queue.length >= this.bound && !this.failed) return;
    const w = this.roomWaiters;
    this.roomWaiters = [];
    for (const f of w) f();
  }

  private fail(err: Error): void {
    if (this.failed) return;
    this.failed = err;
    // Records never handed to the socket are dropped: their memory is free at once.
    for (const rec of this.queue.splice(0)) settle(rec);
    this.opts.onError?.(err);
    this.wakeRoom();
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const f of w) f();
  }
}
