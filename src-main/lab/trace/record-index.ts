// Where each unit's line sits in a trace file being written, so a unit the
// window and the tap have let go is read back from disk by its seq (as
// Wireshark reads a packet of its capture file by offset). The index is
// sparse: one (seq, offset) pair for every STRIDE-th record line, plus an
// entry for each long line (a captured unit's base64 of LONG_LINE bytes or
// more). A read starts at the nearest pair and reads the short lines from
// there, but of a long line only its head: a page of the records list costs
// the heads of its units (a few hundred bytes each), never their captured
// bytes, and only the unit asked for by seq is read whole. Memory: 16 bytes
// per STRIDE units and 32 per long line, under 1% of the file.
import fs from 'node:fs';
import type { UnitRecord } from '@shared/lab/records';
import type { RecordEvent } from './format';
import { decodeEventLine } from './ndjson-codec';
import { TraceError } from './errors';
import { recordHeadLength } from './record-head';
import { HeadReader, type HeadAt, type Segment } from './record-heads-read';

export const INDEX_STRIDE = 64;
/** A record line this long gets an entry of its own, so a read can skip its base64. */
export const LONG_LINE = 4096;

export class RecordIndex {
  /** Seq and file offset of record lines 0, STRIDE, 2 x STRIDE, ... (in the order written: seqs ascend). */
  private readonly seqs: number[] = [];
  private readonly offsets: number[] = [];
  /** The long lines: seq, where the line starts, where its base64 starts, where it ends. */
  private readonly longSeqs: number[] = [];
  private readonly longStarts: number[] = [];
  private readonly longHeadEnds: number[] = [];
  private readonly longEnds: number[] = [];
  private written = 0;
  /** The newest seq indexed (-1 before any). */
  lastSeq = -1;
  /** The offset just past the last indexed line: reads stop there (the file may grow meanwhile). */
  private end = 0;
  /** Bytes read back from the file so far (what the reads cost). */
  bytesRead = 0;

  /** The writer of the file: its lines still batched reach the file before a read. */
  private writer: { flushed(): Promise<void> } | null = null;

  constructor(readonly file: string) {}

  attachWriter(writer: { flushed(): Promise<void> }): void {
    this.writer = writer;
  }

  /** A record line of `seq`, holding `captured` bytes, was written at `offset`, ending at `end`. */
  add(seq: number, offset: number, end: number, captured: number): void {
    if (seq <= this.lastSeq) return;
    if (this.written % INDEX_STRIDE === 0) {
      this.seqs.push(seq);
      this.offsets.push(offset);
    }
    if (end - offset >= LONG_LINE) {
      this.longSeqs.push(seq);
      this.longStarts.push(offset);
      this.longHeadEnds.push(offset + recordHeadLength(end - offset, captured));
      this.longEnds.push(end);
    }
    this.written += 1;
    this.lastSeq = seq;
    this.end = end;
  }

  /** Units indexed. */
  get size(): number {
    return this.written;
  }

  /** Entries the index keeps: one per STRIDE units and one per long line. */
  get entries(): number {
    return this.seqs.length + this.longSeqs.length;
  }

  get firstSeq(): number | undefined {
    return this.seqs[0];
  }

  /** The records of the indexed units with seq in [from, from + count), oldest first (read from their heads). */
  async records(from: number, count: number): Promise<UnitRecord[]> {
    const out: UnitRecord[] = [];
    await this.walk(from, from + count, (h) => void out.push(h.head.record));
    return out;
  }

  /** The record and bytes of one unit, or undefined when the trace does not hold it. */
  async read(seq: number): Promise<RecordEvent | undefined> {
    let found: RecordEvent | undefined;
    await this.walk(seq, seq + 1, async (h, reader) => {
      const line = await reader.line(h.start, h.end);
      const e = decodeEventLine(line.toString('utf8', 0, line.length - 1), 0);
      if (e.type === 'record' && e.record.seq === seq) found = e;
    });
    return found;
  }

  /** Calls `each` for the indexed units with seq in [from, to), in order. */
  private async walk(
    from: number,
    to: number,
    each: (h: HeadAt, reader: HeadReader) => void | Promise<void>,
  ): Promise<void> {
    if (to <= from || this.seqs.length === 0 || from > this.lastSeq || to <= this.seqs[0]!) return;
    const lo = Math.max(0, lastAtOrBefore(this.seqs, from));
    // The long lines from the stride pair's unit up to `to`: their heads, and the short lines between.
    const firstLong = lastAtOrBefore(this.longSeqs, this.seqs[lo]! - 1) + 1;
    const pastLong = lastAtOrBefore(this.longSeqs, to - 1) + 1;
    const fixed: Segment[] = [];
    let pos = this.offsets[lo]!;
    for (let i = firstLong; i < pastLong; i++) {
      const start = this.longStarts[i]!;
      if (start > pos) fixed.push({ start: pos, end: start });
      fixed.push({ start, end: this.longHeadEnds[i]!, lineEnd: this.longEnds[i]! });
      pos = this.longEnds[i]!;
    }
    const tail = {
      start: pos,
      end: pastLong < this.longStarts.length ? this.longStarts[pastLong]! : this.end,
    };
    await this.writer?.flushed();
    const fh = await fs.promises.open(this.file, 'r');
    const reader = new HeadReader(fh);
    try {
      for await (const h of reader.heads(fixed, tail)) {
        const seq = h.head.record.seq;
        if (seq >= to) break;
        if (seq >= from) await each(h, reader);
      }
    } catch (e) {
      if (e instanceof TraceError) throw e;
      throw new TraceError('BAD_EVENT', `reading the session's trace failed: ${(e as Error).message}`);
    } finally {
      this.bytesRead += reader.bytesRead;
      await fh.close();
    }
  }
}

/** The index of the last value <= `v` in ascending `values` (-1 when none is). */
function lastAtOrBefore(values: readonly number[], v: number): number {
  let lo = 0;
  let hi = values.length - 1;
  let at = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid]! <= v) {
      at = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return at;
}
