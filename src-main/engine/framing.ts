// Streamed unit splitters for the two framings on the engine's sockets:
// len-framed blobs (rank <-> relay) and mux records (relay <-> controller).
// Fed arbitrary socket chunks, they check the length against the ceiling as
// soon as it is read (before anything is buffered), then hand the body to a
// sink chunk by chunk, so a model-sized unit is never gathered by the reader.
// Committed-read semantics (WIRE.md 4.1): once a unit's first byte arrived the
// splitter never drops it; `checkStarvation` reports a committed unit that has
// made no progress for too long.
import { LEN_PREFIX_LEN, MUX_HEADER_LEN } from '@shared/wire/constants';
import { WireError } from '@shared/wire/errors';
import { checkMuxHeaderPrefix, parseMuxHeader, type MuxHeader } from '@shared/wire/mux';

export interface UnitSink<H> {
  /** The unit's header is in and passed the length checks. */
  onStart(header: H, headerBytes: Uint8Array): void;
  /** A piece of the body (a view into the socket chunk: copy it to keep it). */
  onChunk(bytes: Uint8Array): void;
  onEnd(): void;
}

abstract class Splitter<H> {
  private head: Uint8Array;
  private headLen = 0;
  private left = -1; // body bytes still expected; -1 while reading the header
  lastProgressAt = 0;
  /** A unit started and not finished yet. */
  get committed(): boolean {
    return this.headLen > 0 || this.left >= 0;
  }

  constructor(
    private readonly headerLen: number,
    protected readonly sink: UnitSink<H>,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.head = new Uint8Array(headerLen);
  }

  protected abstract parseHeader(head: Uint8Array, complete: boolean): { header: H; bodyLen: number } | null;

  /** Feeds one chunk. Throws WireError on a bad header; the stream is then unusable. */
  push(chunk: Uint8Array): void {
    if (chunk.length > 0) this.lastProgressAt = this.now();
    let off = 0;
    while (off < chunk.length) {
      if (this.left < 0) {
        const take = Math.min(this.headerLen - this.headLen, chunk.length - off);
        this.head.set(chunk.subarray(off, off + take), this.headLen);
        this.headLen += take;
        off += take;
        const complete = this.headLen === this.headerLen;
        // Checks run on every prefix so a bad magic is rejected at once.
        const parsed = this.parseHeader(this.head.subarray(0, this.headLen), complete);
        if (!complete || !parsed) continue;
        this.left = parsed.bodyLen;
        const headerBytes = this.head.slice();
        this.headLen = 0;
        this.sink.onStart(parsed.header, headerBytes);
        if (this.left === 0) this.finish();
        continue;
      }
      const take = Math.min(this.left, chunk.length - off);
      this.left -= take;
      this.sink.onChunk(chunk.subarray(off, off + take));
      off += take;
      if (this.left === 0) this.finish();
    }
  }

  private finish(): void {
    this.left = -1;
    this.sink.onEnd();
  }

  /** STARVED when a committed unit made no progress for `deadlineMs`. */
  checkStarvation(now: number, deadlineMs: number): WireError | null {
    if (!this.committed || now - this.lastProgressAt < deadlineMs) return null;
    return new WireError(
      'STARVED',
      `committed read starved mid-frame: no byte for ${Math.round(now - this.lastProgressAt)} ms, peer presumed gone`,
    );
  }

  /** What a clean close means now: null between units, an error mid-unit. */
  closeError(): WireError | null {
    if (!this.committed) return null;
    return new WireError('TRUNCATED', 'peer closed mid-frame');
  }
}

export class LenFrameSplitter extends Splitter<number> {
  constructor(
    private readonly ceiling: number,
    sink: UnitSink<number>,
    now?: () => number,
  ) {
    super(LEN_PREFIX_LEN, sink, now);
  }
  protected parseHeader(head: Uint8Array, complete: boolean): { header: number; bodyLen: number } | null {
    if (!complete) return null;
    const len = (head[0] | (head[1] << 8) | (head[2] << 16) | (head[3] << 24)) >>> 0;
    if (len > this.ceiling)
      throw new WireError(
        'OVER_CEILING',
        `len-framed blob of ${len} bytes exceeds the frame ceiling ${this.ceiling}`,
      );
    return { header: len, bodyLen: len };
  }
}

export class MuxSplitter extends Splitter<MuxHeader> {
  constructor(
    private readonly ceiling: number,
    sink: UnitSink<MuxHeader>,
    now?: () => number,
  ) {
    super(MUX_HEADER_LEN, sink, now);
  }
  protected parseHeader(head: Uint8Array, complete: boolean): { header: MuxHeader; bodyLen: number } | null {
    if (!complete) {
      checkMuxHeaderPrefix(head, this.ceiling);
      return null;
    }
    const h = parseMuxHeader(head, { ceiling: this.ceiling });
    return { header: h, bodyLen: h.payloadLen };
  }
}

/** Gathers a body into one buffer, growing as bytes arrive (never sized by the length field up front beyond the ceiling-checked length). */
export class BodyBuffer {
  private buf: Uint8Array;
  private len = 0;
  constructor(private readonly expected: number) {
    // The length passed the ceiling check; grow in steps so a lying length
    // costs at most one step of memory before the bytes actually arrive.
    this.buf = new Uint8Array(Math.min(expected, 1 << 20));
  }
  push(bytes: Uint8Array): void {
    if (this.len + bytes.length > this.buf.length) {
      const next = new Uint8Array(
        Math.min(this.expected, Math.max(this.buf.length * 2, this.len + bytes.length)),
      );
      next.set(this.buf.subarray(0, this.len));
      this.buf = next;
    }
    this.buf.set(bytes, this.len);
    this.len += bytes.length;
  }
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }
}
