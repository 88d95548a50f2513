// Incremental reader of a mux stream (WIRE.md 3.2, 4.1; flodl's
// try_read_from). Like flodl, it judges nothing before the 25th header byte
// (read_idle_gate + fill_committed), then runs finish_read's checks in its
// order: magic, version, ceiling (before any payload is buffered), the whole
// payload, then (where it verifies) MAC and kind. Buffered units come back
// whole from push; with a sink, chosen records (HostFrame/Broadcast) stream
// their payload chunk by chunk and, given a MAC, are verified before onEnd.
import { DEFAULT_FRAME_CEILING, MUX_HEADER_LEN, MUX_MAC_PREFIX_LEN, READ_CHUNK } from './constants';
import { WireError } from './errors';
import { flodlMux } from './flodl-text';
import { readU32LE } from './bytes';
import { tagsEqual, type Mac, type MacStream } from './mac';
import { muxKindOfByte, parseMuxHeader, type MuxHeader } from './mux';
import {
  ChunkAccumulator,
  ReaderBase,
  incrementalFill,
  type FrameSink,
  type ReaderClock,
} from './reader-core';

export interface MuxReaderOptions extends ReaderClock {
  ceiling?: number;
  /** Streamed mode for the records `streams` selects (default: all records). */
  sink?: FrameSink;
  streams?: (h: MuxHeader) => boolean;
  /** With a sink, verify streamed records' MAC (then the kind) before onEnd. */
  mac?: Mac;
}

/** Select HostFrame and Broadcast (the model-sized kinds) for streaming. */
export const streamModelSizedKinds = (h: MuxHeader): boolean => {
  const k = muxKindOfByte(h.kind);
  return k === 'HostFrame' || k === 'Broadcast';
};

export class MuxReader extends ReaderBase {
  private readonly ceiling: number;
  private readonly sink: FrameSink | undefined;
  private readonly streams: (h: MuxHeader) => boolean;
  private readonly mac: Mac | undefined;
  private readonly header = new Uint8Array(MUX_HEADER_LEN);
  private headerLen = 0;
  /** Payload length once the header is in; -1 while reading the header. */
  private payloadLen = -1;
  private payloadGot = 0;
  private streaming = false;
  private macStream: MacStream | null = null;
  private readonly unit = new ChunkAccumulator();

  constructor(opts: MuxReaderOptions = {}) {
    super(opts);
    this.ceiling = opts.ceiling ?? DEFAULT_FRAME_CEILING;
    this.sink = opts.sink;
    this.streams = opts.streams ?? (() => true);
    this.mac = opts.mac;
  }

  protected heldBytes(): number {
    return this.payloadLen < 0 ? this.headerLen : MUX_HEADER_LEN + this.payloadGot;
  }

  /** try_read_from: the idle gate took byte 0, fill_committed fills header[1..25], then the payload by READ_CHUNK. */
  protected override committedFill(): { filled: number; len: number } {
    if (this.payloadLen < 0) return { filled: Math.max(0, this.headerLen - 1), len: MUX_HEADER_LEN - 1 };
    return incrementalFill(this.payloadGot, this.payloadLen, READ_CHUNK);
  }

  /** Feeds bytes; returns the completed buffered records (header + payload). */
  push(chunk: Uint8Array): Uint8Array[] {
    return this.guarded(() => {
      const out: Uint8Array[] = [];
      let pos = 0;
      this.progressed(chunk.length);
      while (pos < chunk.length) {
        if (this.payloadLen < 0) {
          const n = Math.min(MUX_HEADER_LEN - this.headerLen, chunk.length - pos);
          this.header.set(chunk.subarray(pos, pos + n), this.headerLen);
          this.unit.append(chunk.subarray(pos, pos + n));
          this.headerLen += n;
          pos += n;
          // Nothing is judged before the 25th byte (flodl reads the whole header first).
          if (this.headerLen < MUX_HEADER_LEN) break;
          this.startPayload();
        } else {
          const n = Math.min(this.payloadLen - this.payloadGot, chunk.length - pos);
          const part = chunk.subarray(pos, pos + n);
          if (this.streaming) {
            this.macStream?.update(part);
            this.sink!.onChunk(part);
          } else this.unit.append(part);
          this.payloadGot += n;
          pos += n;
        }
        if (this.payloadLen >= 0 && this.payloadGot === this.payloadLen) {
          const done = this.complete();
          if (done) out.push(done);
        }
      }
      return out;
    });
  }

  private startPayload(): void {
    const h = parseMuxHeader(this.header, { ceiling: this.ceiling });
    this.payloadLen = h.payloadLen;
    this.payloadGot = 0;
    this.streaming = !!this.sink && this.streams(h);
    if (this.streaming) {
      this.unit.clear();
      if (this.mac) {
        this.macStream = this.mac.stream();
        this.macStream.update(this.header.subarray(0, MUX_MAC_PREFIX_LEN));
      }
      this.sink!.onStart(h.payloadLen, this.header.slice());
    }
  }

  private complete(): Uint8Array | null {
    const streamed = this.streaming;
    const ms = this.macStream;
    this.payloadLen = -1;
    this.headerLen = 0;
    this.payloadGot = 0;
    this.streaming = false;
    this.macStream = null;
    if (!streamed) return this.unit.take();
    if (ms) {
      const computed = ms.finish();
      const carried = this.header.subarray(MUX_MAC_PREFIX_LEN, MUX_HEADER_LEN);
      if (!tagsEqual(computed, carried)) {
        throw new WireError(
          'HMAC_MISMATCH',
          'mux record HMAC verification failed',
          flodlMux.hmac(
            computed,
            carried,
            this.header[8],
            readU32LE(this.header, 9),
            readU32LE(this.header, 13),
          ),
        );
      }
      if (!muxKindOfByte(this.header[8]))
        throw new WireError(
          'UNKNOWN_KIND',
          `unknown mux record kind 0x${this.header[8].toString(16).padStart(2, '0')}`,
          flodlMux.unknownKind(this.header[8]),
        );
    }
    this.sink!.onEnd();
    return null;
  }

  /**
   * End of stream. Idle: a clean EOF (read_idle_gate's Eof). By default a
   * partial record is TRUNCATED ("peer closed mid-frame", try_read_from's
   * fill_committed). `cleanInHeader` applies the blocking read_from rule
   * instead: an EOF anywhere inside the 25-byte header is a clean EOF
   * (read_exact's UnexpectedEof -> Ok(None)); inside the payload it is still
   * "peer closed mid-frame".
   */
  override end(opts: { cleanInHeader?: boolean } = {}): void {
    if (opts.cleanInHeader && this.payloadLen < 0) {
      this.guarded(() => this.resetPartial());
      return;
    }
    super.end();
  }

  /** Drops any partial record: only the historical NaiveReader does this. */
  resetPartial(): number {
    const dropped = this.heldBytes();
    this.payloadLen = -1;
    this.headerLen = 0;
    this.payloadGot = 0;
    this.streaming = false;
    this.macStream = null;
    this.unit.clear();
    return dropped;
  }
}
