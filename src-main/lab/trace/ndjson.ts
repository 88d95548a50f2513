// Streaming trace writer and reader (docs/trace-format.md). The writer keeps
// the stream's backpressure visible to its caller; the reader splits lines
// itself (not node:readline) because it must know whether the last line was
// terminated: a crash mid-write leaves a cut last line, which is reported,
// not thrown.
import { createReadStream } from 'node:fs';
import { atomicWriteStream } from '../../files/atomic-write';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { TraceError } from './errors';
import { TRACE_FORMAT, TRACE_VERSION, type EndEvent, type TraceEvent, type TraceHeader } from './format';
import {
  decodeEventLine,
  decodeHeaderLine,
  encodeEventLine,
  encodeEventLineParts,
  encodeHeaderLine,
} from './ndjson-codec';

export function makeTraceHeader(fields: Omit<TraceHeader, 'format' | 'version'>): TraceHeader {
  return { format: TRACE_FORMAT, version: TRACE_VERSION, ...fields };
}

/** The batch of lines a writer gathers before one stream write. */
const PENDING_BYTES = 256 * 1024;

export class TraceWriter {
  private records = 0;
  private events = 0;
  private lastT = 0;
  private closed = false;
  private failure: Error | null = null;
  /** Events not written: after a stream error or after close. */
  dropped = 0;

  /**
   * Never throws from write(): the recorder calls it from the tap's
   * listener, and a full disk must not take the session down. A stream
   * error is kept (see `error`) and close() rejects with it.
   */
  constructor(
    private readonly out: Writable,
    readonly header: TraceHeader,
  ) {
    out.on('error', (e: Error) => {
      this.failure ??= e;
    });
    const line = encodeHeaderLine(header);
    this.byteCount = Buffer.byteLength(line);
    out.write(line);
  }

  private byteCount = 0;
  /** Lines not yet handed to the stream (written out once per turn of the event loop, or when full). */
  private pending = Buffer.allocUnsafe(PENDING_BYTES);
  private used = 0;
  private flushSoon: NodeJS.Immediate | null = null;

  /**
   * Where the file stands after the last write: its length in bytes and the
   * end line a copy cut at that length would need. Taken in one tick, so a
   * copy of the first `bytes` bytes plus `end` is a complete trace once
   * flushed() has resolved (the length counts lines still in the batch).
   */
  position(): { bytes: number; end: EndEvent } {
    return {
      bytes: this.byteCount,
      end: { type: 'end', t: this.lastT, records: this.records, events: this.events },
    };
  }

  /** The file's length after the last write (lines still batched included): where the next line goes. */
  get bytesWritten(): number {
    return this.byteCount;
  }

  /** Resolves once everything written so far has reached the stream's destination. */
  flushed(): Promise<void> {
    this.flushPending();
    if (this.failure || this.out.writableFinished || this.out.destroyed) return Promise.resolve();
    return new Promise((resolve) => this.out.write('', () => resolve()));
  }

  /** A trace file written whole or not at all: it appears under `path` when close() has written its end line. */
  static toFile(path: string, header: TraceHeader): TraceWriter {
    return new TraceWriter(atomicWriteStream(path), header);
  }

  /** The stream's error, if writing failed. */
  get error(): Error | null {
    return this.failure;
  }

  /** Appends one event. false = not written, or the stream's buffer is full: await drained() before writing much more. */
  write(event: Exclude<TraceEvent, EndEvent>): boolean {
    if (this.closed || this.failure) {
      this.dropped += 1;
      return false;
    }
    this.events += 1;
    if (event.type === 'record') this.records += 1;
    this.lastT = Math.max(this.lastT, event.t);
    // A record's base64 goes in as Latin-1 (its bytes as they are: ASCII), the rest as UTF-8.
    const [head, base64, tail] = encodeEventLineParts(event);
    const headLen = Buffer.byteLength(head);
    const size = base64 === undefined ? headLen : headLen + base64.length + tail.length;
    this.byteCount += size;
    if (size > PENDING_BYTES) {
      // A line bigger than the batch (a model-sized unit): its parts go to the stream as they are.
      this.flushPending();
      this.out.write(head);
      if (base64 === undefined) return !this.out.writableNeedDrain;
      this.out.write(base64, 'latin1');
      return this.out.write(tail);
    }
    if (this.pending.length - this.used < size) this.flushPending();
    this.used += this.pending.write(head, this.used, 'utf8');
    if (base64 !== undefined) {
      this.used += this.pending.write(base64, this.used, 'latin1');
      this.used += this.pending.write(tail, this.used, 'utf8');
    }
    this.flushSoon ??= setImmediate(() => this.flushPending());
    return !this.out.writableNeedDrain;
  }

  /**
   * Hands the batched lines to the stream as one chunk. Three stream writes per record (a
   * Buffer made for each, then a writev of thousands of them) cost the engine about 7 us of its
   * loop per record; a 20,000 records/s session spent a quarter of a core on it.
   */
  private flushPending(): void {
    if (this.flushSoon) clearImmediate(this.flushSoon);
    this.flushSoon = null;
    if (this.used === 0) return;
    // The stream keeps the chunk until the file has it: a fresh batch buffer from here on.
    const chunk = this.pending.subarray(0, this.used);
    this.pending = Buffer.allocUnsafe(PENDING_BYTES);
    this.used = 0;
    if (!this.failure) this.out.write(chunk);
  }

  async drained(): Promise<void> {
    this.flushPending();
    if (this.failure || !this.out.writableNeedDrain) return;
    // once() rejects if the stream errors while we wait; the listener above keeps the error.
    await once(this.out, 'drain').catch(() => {});
  }

  private closing: Promise<void> | null = null;

  /**
   * Null while the trace is being written; once close() was called, its promise: resolved when
   * the end line is in the file (a file stream: the file is whole under its name), rejected if
   * writing failed.
   */
  get whenClosed(): Promise<void> | null {
    return this.closing;
  }

  /**
   * Gives the trace up: nothing appears under its path (a file written by toFile is never made);
   * resolves once its partial file is gone, so a process that exits next leaves none behind.
   */
  abandon(): Promise<void> {
    this.closed = true;
    this.used = 0;
    if (this.out.destroyed) return Promise.resolve();
    const gone = once(this.out, 'close').then(
      () => {},
      () => {},
    );
    this.out.destroy();
    return gone;
  }

  /** Writes the end line (a trace without one was cut short) and ends the stream; rejects if writing failed. */
  close(t = this.lastT): Promise<void> {
    this.closing ??= this.finish(t);
    return this.closing;
  }

  private async finish(t: number): Promise<void> {
    this.closed = true;
    this.flushPending();
    if (!this.failure) {
      const end: EndEvent = { type: 'end', t, records: this.records, events: this.events };
      this.out.end(encodeEventLine(end));
      if (!this.out.writableFinished) await once(this.out, 'finish').catch(() => {});
    }
    if (this.failure) {
      this.out.destroy();
      throw this.failure;
    }
  }
}

export type TraceItem =
  | { kind: 'header'; header: TraceHeader; line: number }
  | { kind: 'event'; event: TraceEvent; line: number }
  /** The last line had no newline and did not parse: the writer was cut off. */
  | { kind: 'truncated'; line: number; bytes: number };

/** Chunks of a trace: a file stream, a socket, or an array of buffers. */
export type TraceSource = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>;

export interface ReadOptions {
  /** Longest accepted line, in bytes (a guard against a file that is one endless line). */
  maxLineBytes?: number;
}

const DEFAULT_MAX_LINE = 512 * 1024 * 1024;

/** Splits chunks into lines; yields [text, terminated]. */
async function* lines(source: TraceSource, maxLineBytes: number): AsyncGenerator<[string, boolean]> {
  let parts: Buffer[] = [];
  let partLen = 0;
  let lineNo = 0;
  for await (const chunk of source) {
    let buf =
      typeof chunk === 'string'
        ? Buffer.from(chunk, 'utf8')
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (;;) {
      const nl = buf.indexOf(0x0a);
      if (nl < 0) break;
      const piece = buf.subarray(0, nl);
      const whole = parts.length === 0 ? piece : Buffer.concat([...parts, piece]);
      parts = [];
      partLen = 0;
      lineNo += 1;
      yield [whole.toString('utf8'), true];
      buf = buf.subarray(nl + 1);
    }
    if (buf.length > 0) {
      parts.push(Buffer.from(buf));
      partLen += buf.length;
      if (partLen > maxLineBytes)
        throw new TraceError('BAD_EVENT', `line longer than ${maxLineBytes} bytes`, lineNo + 1);
    }
  }
  if (partLen > 0) yield [Buffer.concat(parts).toString('utf8'), false];
}

/** Reads a trace line by line: the header first, then the events in file order. */
export async function* readTrace(source: TraceSource, opts: ReadOptions = {}): AsyncGenerator<TraceItem> {
  let line = 0;
  let sawHeader = false;
  for await (const [raw, terminated] of lines(source, opts.maxLineBytes ?? DEFAULT_MAX_LINE)) {
    line += 1;
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (text.trim() === '') continue;
    if (!sawHeader) {
      if (!terminated && !text.trimEnd().endsWith('}'))
        throw new TraceError('EMPTY', 'the trace ends inside its header line', line);
      yield { kind: 'header', header: decodeHeaderLine(text, line), line };
      sawHeader = true;
      continue;
    }
    if (terminated) {
      yield { kind: 'event', event: decodeEventLine(text, line), line };
      continue;
    }
    // An unterminated last line: keep it if it is whole, report it if it was cut.
    let event: TraceEvent;
    try {
      event = decodeEventLine(text, line);
    } catch {
      yield { kind: 'truncated', line, bytes: Buffer.byteLength(text) };
      return;
    }
    yield { kind: 'event', event, line };
  }
  if (!sawHeader) throw new TraceError('EMPTY', 'the trace has no header line');
}

export function readTraceFile(path: string, opts?: ReadOptions): AsyncGenerator<TraceItem> {
  return readTrace(createReadStream(path), opts);
}

export interface LoadedTrace {
  header: TraceHeader;
  events: TraceEvent[];
  /** The end line was present: the writer closed the trace. */
  complete: boolean;
  /** The last line was cut (a crash mid-write); the events before it are intact. */
  truncatedTail: boolean;
}

/** Whole-trace convenience for tests and small traces; large ones should iterate readTrace. */
export async function loadTrace(source: TraceSource, opts?: ReadOptions): Promise<LoadedTrace> {
  let header: TraceHeader | undefined;
  const events: TraceEvent[] = [];
  let truncatedTail = false;
  for await (const item of readTrace(source, opts)) {
    if (item.kind === 'header') header = item.header;
    else if (item.kind === 'event') events.push(item.event);
    else truncatedTail = true;
  }
  if (!header) throw new TraceError('EMPTY', 'the trace has no header line');
  const complete = events.length > 0 && events[events.length - 1]!.type === 'end';
  return { header, events, complete, truncatedTail };
}

export function loadTraceFile(path: string, opts?: ReadOptions): Promise<LoadedTrace> {
  return loadTrace(createReadStream(path), opts);
}
