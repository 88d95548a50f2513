// The chunks a tap forwards, gathered into one buffer per event-loop turn on
// their way to the decode worker. A socket hands the tap 64 KiB at a time, and
// one message per chunk (an allocation, a copy and a postMessage each) cost
// the forwarding thread about half again what forwarding alone costs; a batch
// is one copy per chunk into a buffer the worker hands back when it has taken
// the bytes out (a fresh 1 MiB buffer costs its page faults: 8 MiB into fresh
// buffers took 2.8-16 ms here, into reused ones 0.1-0.2 ms).
import type { Direction } from '@shared/lab/state';

/** One chunk's place in a batch: `length` bytes after the previous segment's. */
export interface ChunkSegment {
  conn: number;
  dir: Direction;
  t: number;
  length: number;
}

export interface ChunkBatch {
  bytes: Uint8Array;
  segments: ChunkSegment[];
}

/** Bytes one batch holds (a chunk larger than this travels alone). */
export const BATCH_BYTES = 1024 * 1024;
/** Buffers kept for reuse (the worker returns each after copying its bytes out). */
const POOL_MAX = 8;

export class ChunkBatcher {
  private buf: Uint8Array | null = null;
  private used = 0;
  private segments: ChunkSegment[] = [];
  private scheduled = false;
  private readonly pool: Uint8Array[] = [];

  /** `send` posts a batch (its bytes' buffer may be transferred: the batcher keeps no view of it). */
  constructor(private readonly send: (batch: ChunkBatch) => void) {}

  /** Copies `chunk` in; the batch goes at the end of this event-loop turn, or sooner when full. */
  add(conn: number, dir: Direction, t: number, chunk: Uint8Array): void {
    if (chunk.length > BATCH_BYTES - this.used) this.flush();
    if (chunk.length > BATCH_BYTES) {
      this.send({ bytes: new Uint8Array(chunk), segments: [{ conn, dir, t, length: chunk.length }] });
      return;
    }
    this.buf ??= this.pool.pop() ?? new Uint8Array(BATCH_BYTES);
    this.buf.set(chunk, this.used);
    this.used += chunk.length;
    this.segments.push({ conn, dir, t, length: chunk.length });
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      });
    }
  }

  /** A batch buffer back from the worker, for the next batches. */
  giveBack(buffer: ArrayBuffer): void {
    if (buffer.byteLength === BATCH_BYTES && this.pool.length < POOL_MAX)
      this.pool.push(new Uint8Array(buffer));
  }

  /** Sends what is gathered now (before any other message to the worker, which must not overtake it). */
  flush(): void {
    if (this.segments.length === 0 || !this.buf) return;
    const segments = this.segments;
    this.segments = [];
    // A small batch is copied out and the buffer kept; a large one gives its buffer away.
    let bytes: Uint8Array;
    if (this.used < BATCH_BYTES / 4) bytes = this.buf.slice(0, this.used);
    else {
      bytes = this.buf.subarray(0, this.used);
      this.buf = null;
    }
    this.used = 0;
    this.send({ bytes, segments });
  }
}
