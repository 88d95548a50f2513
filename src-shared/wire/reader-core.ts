// What every incremental reader shares (WIRE.md 4.1, event-driven form):
// an observable idle/committed state with the time of the last progress for
// the 60 s starvation deadline, and a chunk accumulator that only ever holds
// bytes that actually arrived (never one allocation sized by a length field).
import { COMMITTED_READ_STARVATION_MS } from './constants';
import { WireError } from './errors';
import { flodlMux } from './flodl-text';

export type ReaderState = 'idle' | 'committed';

export interface ReaderStatus {
  /** idle: no partial unit held. committed: a partial unit is held and must never be dropped. */
  state: ReaderState;
  /** Bytes of the partial unit held (header and payload). */
  buffered: number;
  /** Time (the reader's clock) of the last push that brought bytes. */
  lastProgressAt: number;
}

/** Streamed mode: the payload of a unit is delivered as it arrives instead of being buffered. */
export interface FrameSink {
  /** The header is complete and passed its checks; `totalLen` is the payload length. */
  onStart(totalLen: number, header: Uint8Array): void;
  /** A view into the pushed chunk: copy it if it must outlive the call. */
  onChunk(bytes: Uint8Array): void;
  /** The unit is complete (and, for a MuxReader with a MAC, verified). */
  onEnd(): void;
}

export interface ReaderClock {
  now?: () => number;
}

/**
 * Collects the bytes of one unit as views of the pushed chunks; `take`
 * joins them once (sized by bytes received, not by a declared length) or
 * returns the single view when the unit sat inside one chunk. Pushed chunks
 * must not be mutated by the caller afterwards (socket chunks never are).
 *
 * `expect(n)` joins as the bytes arrive instead: a unit that spans chunks is
 * copied into one buffer chunk by chunk, so `take` after the last chunk has
 * nothing left to copy (the join of a model-sized unit otherwise ran after
 * its last byte, on the round's clock). The buffer is the declared length
 * when that is at most JOIN_MIN_BYTES, else it grows fourfold up to it: a
 * 16 MiB unit takes buffers of 1, 4 and 16 MiB (1.3 times its size, where
 * doubling took twice), and a lying length costs at most four times the
 * bytes actually sent, or JOIN_MIN_BYTES.
 */
/** Joining as bytes arrive: the first buffer's size at most, and the growth factor after it. */
const JOIN_MIN_BYTES = 1 << 20;
const JOIN_GROWTH = 4;

export class ChunkAccumulator {
  private parts: Uint8Array[] = [];
  private total = 0;
  /** The declared length when joining as the bytes arrive (0: join in take). */
  private declared = 0;
  /** The bytes joined so far (the first `total` bytes), once a second chunk came. */
  private joined: Uint8Array | null = null;
  private alloc: ((n: number) => Uint8Array) | null = null;

  get length(): number {
    return this.total;
  }

  /**
   * The unit declares `n` bytes: join as they arrive (until take or clear).
   * With `alloc` (a pool of recycled buffers), the buffer is the declared
   * length from the start, taken from it: a lying length then holds at most
   * one declared length, which the reader's ceiling bounds.
   */
  expect(n: number, alloc?: (n: number) => Uint8Array): void {
    this.declared = n;
    this.alloc = alloc ?? null;
  }

  append(b: Uint8Array): void {
    if (b.length === 0) return;
    if (this.declared > 0 && (this.joined || this.parts.length > 0)) return this.appendJoined(b);
    this.parts.push(b);
    this.total += b.length;
  }

  private appendJoined(b: Uint8Array): void {
    const need = this.total + b.length;
    if (!this.joined || this.joined.length < need) {
      const grown =
        this.alloc && !this.joined && need <= this.declared
          ? this.alloc(this.declared)
          : new Uint8Array(
              Math.max(need, Math.min(this.declared, Math.max(JOIN_MIN_BYTES, JOIN_GROWTH * need))),
            );
      if (this.joined) grown.set(this.joined.subarray(0, this.total));
      else {
        let off = 0;
        for (const p of this.parts) {
          grown.set(p, off);
          off += p.length;
        }
      }
      this.joined = grown;
      this.parts = [];
    }
    this.joined.set(b, this.total);
    this.total = need;
  }

  take(): Uint8Array {
    const out = this.joined ? this.joined.subarray(0, this.total) : this.join();
    this.clear();
    return out;
  }

  private join(): Uint8Array {
    if (this.parts.length === 1) return this.parts[0];
    const out = new Uint8Array(this.total);
    let off = 0;
    for (const p of this.parts) {
      out.set(p, off);
      off += p.length;
    }
    return out;
  }

  clear(): void {
    this.parts = [];
    this.total = 0;
    this.declared = 0;
    this.joined = null;
    this.alloc = null;
  }
}

/** Base of the readers: clock, progress, poisoning after the first error. */
export abstract class ReaderBase {
  protected readonly now: () => number;
  protected lastProgress: number;
  private failure: WireError | null = null;

  constructor(opts: ReaderClock = {}) {
    this.now = opts.now ?? (() => Date.now());
    this.lastProgress = this.now();
  }

  /** Bytes of the partial unit currently held. */
  protected abstract heldBytes(): number;

  /**
   * The buffer flodl's fill_committed is filling at this point of the unit
   * (`filled` of `len`), for its starvation text; null where relay/mux.rs does
   * not read this kind of unit (its text is then not flodl's).
   */
  protected committedFill(): { filled: number; len: number } | null {
    return null;
  }

  status(): ReaderStatus {
    const buffered = this.heldBytes();
    return { state: buffered > 0 ? 'committed' : 'idle', buffered, lastProgressAt: this.lastProgress };
  }

  /**
   * The committed-read starvation rule: a partial unit with no byte for
   * `deadlineMs` means the peer is presumed gone. Idle readers never starve.
   */
  checkStarvation(
    now: number = this.now(),
    deadlineMs: number = COMMITTED_READ_STARVATION_MS,
  ): WireError | null {
    const s = this.status();
    if (s.state !== 'committed' || now - s.lastProgressAt < deadlineMs) return null;
    const fill = this.committedFill();
    return new WireError(
      'STARVED',
      `committed read starved mid-frame: no byte for ${Math.round(now - s.lastProgressAt)} ms with ${s.buffered} bytes held, peer presumed gone`,
      fill ? flodlMux.starved(fill.filled, fill.len) : undefined,
    );
  }

  /** Runs `f` unless the reader already failed; a failure poisons the reader (the stream is desynced). */
  protected guarded<T>(f: () => T): T {
    if (this.failure) throw this.failure;
    try {
      return f();
    } catch (e) {
      if (e instanceof WireError) this.failure = e;
      throw e;
    }
  }

  protected progressed(n: number): void {
    if (n > 0) this.lastProgress = this.now();
  }

  /**
   * The stream ended. Idle: a clean EOF. Committed: "peer closed mid-frame"
   * (TRUNCATED), a hard error.
   */
  end(): void {
    this.guarded(() => {
      const held = this.heldBytes();
      if (held > 0)
        throw new WireError(
          'TRUNCATED',
          `peer closed mid-frame with ${held} bytes of a partial unit held`,
          this.committedFill() ? flodlMux.peerClosedMidFrame() : undefined,
        );
    });
  }
}

/**
 * fill_committed_incremental's view of a payload being read: it fills chunks
 * of at most READ_CHUNK bytes, so `filled/len` in flodl's starvation text are
 * those of the current chunk.
 */
export function incrementalFill(
  got: number,
  total: number,
  readChunk: number,
): { filled: number; len: number } {
  const chunkStart = Math.floor(got / readChunk) * readChunk;
  return { filled: got - chunkStart, len: Math.min(readChunk, total - chunkStart) };
}
