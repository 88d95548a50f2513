// Incremental reader of a len-framed stream (WIRE.md 3.7, 4.1; flodl's
// try_read_len_framed): the rank <-> relay loopback after the handshake. The
// prefix is checked against the ceiling the moment its 4th byte arrives
// (never earlier), before anything else is buffered.
import { DEFAULT_FRAME_CEILING, LEN_PREFIX_LEN, READ_CHUNK } from './constants';
import { checkLenPrefix } from './len-frame';
import {
  ChunkAccumulator,
  ReaderBase,
  incrementalFill,
  type FrameSink,
  type ReaderClock,
} from './reader-core';

export interface LenFrameReaderOptions extends ReaderClock {
  ceiling?: number;
  /** Streamed mode: blobs go to the sink chunk by chunk; push returns nothing. */
  sink?: FrameSink;
}

export class LenFrameReader extends ReaderBase {
  private readonly ceiling: number;
  private readonly sink: FrameSink | undefined;
  private readonly prefix = new Uint8Array(LEN_PREFIX_LEN);
  private prefixLen = 0;
  /** Blob length once the prefix is in; -1 while reading the prefix. */
  private bodyLen = -1;
  private bodyGot = 0;
  /** Buffered mode: views of the unit's bytes (prefix included), joined once complete. */
  private readonly unit = new ChunkAccumulator();

  constructor(opts: LenFrameReaderOptions = {}) {
    super(opts);
    this.ceiling = opts.ceiling ?? DEFAULT_FRAME_CEILING;
    this.sink = opts.sink;
  }

  /** The blob of a whole unit returned by push (prefix stripped). */
  static blobOf(unit: Uint8Array): Uint8Array {
    return unit.subarray(LEN_PREFIX_LEN);
  }

  protected heldBytes(): number {
    return this.bodyLen < 0 ? this.prefixLen : LEN_PREFIX_LEN + this.bodyGot;
  }

  /** try_read_len_framed: the idle gate took byte 0, fill_committed fills len_buf[1..4], then the body by READ_CHUNK. */
  protected override committedFill(): { filled: number; len: number } {
    if (this.bodyLen < 0) return { filled: Math.max(0, this.prefixLen - 1), len: LEN_PREFIX_LEN - 1 };
    return incrementalFill(this.bodyGot, this.bodyLen, READ_CHUNK);
  }

  /**
   * End of stream. Idle: clean EOF. By default a partial unit is TRUNCATED
   * ("peer closed mid-frame", try_read_len_framed). `cleanInPrefix` applies
   * read_len_prefix / read_len_framed instead: an EOF inside the 4-byte
   * prefix is a clean EOF (read_exact's UnexpectedEof -> Ok(None)).
   */
  override end(opts: { cleanInPrefix?: boolean } = {}): void {
    if (opts.cleanInPrefix && this.bodyLen < 0) {
      this.guarded(() => this.resetPartial());
      return;
    }
    super.end();
  }

  /** Feeds bytes; returns the completed units (prefix + blob) in buffered mode. */
  push(chunk: Uint8Array): Uint8Array[] {
    return this.guarded(() => {
      const out: Uint8Array[] = [];
      let pos = 0;
      this.progressed(chunk.length);
      while (pos < chunk.length) {
        if (this.bodyLen < 0) {
          const n = Math.min(LEN_PREFIX_LEN - this.prefixLen, chunk.length - pos);
          this.prefix.set(chunk.subarray(pos, pos + n), this.prefixLen);
          if (!this.sink) this.unit.append(chunk.subarray(pos, pos + n));
          this.prefixLen += n;
          pos += n;
          if (this.prefixLen < LEN_PREFIX_LEN) break;
          this.bodyLen = checkLenPrefix(this.prefix, this.ceiling);
          this.bodyGot = 0;
          this.sink?.onStart(this.bodyLen, this.prefix.slice());
        } else {
          const n = Math.min(this.bodyLen - this.bodyGot, chunk.length - pos);
          const part = chunk.subarray(pos, pos + n);
          if (this.sink) this.sink.onChunk(part);
          else this.unit.append(part);
          this.bodyGot += n;
          pos += n;
        }
        if (this.bodyLen >= 0 && this.bodyGot === this.bodyLen) out.push(...this.complete());
      }
      return out;
    });
  }

  private complete(): Uint8Array[] {
    this.bodyLen = -1;
    this.prefixLen = 0;
    this.bodyGot = 0;
    if (this.sink) {
      this.sink.onEnd();
      return [];
    }
    return [this.unit.take()];
  }

  /** Drops any partial unit: only the historical NaiveReader does this. */
  resetPartial(): number {
    const dropped = this.heldBytes();
    this.bodyLen = -1;
    this.prefixLen = 0;
    this.bodyGot = 0;
    this.unit.clear();
    return dropped;
  }
}
