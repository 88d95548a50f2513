// Where each unit's line sits in a trace file being written, so a unit the
// window and the tap have let go is read back from disk by its seq (as
// Wireshark reads a packet of its capture file by offset). The index is
// sparse: one (seq, offset) pair for every STRIDE-th record line, so an
// hour-long 4 GiB recording costs a few MB of index; a read scans forward
// from the nearest pair, at most STRIDE record lines.
import fs from 'node:fs';
import type { RecordEvent } from './format';
import { decodeEventLine } from './ndjson-codec';
import { TraceError } from './errors';

export const INDEX_STRIDE = 64;
/** Bytes read from disk at a time while scanning forward. */
const READ_CHUNK = 256 * 1024;

export class RecordIndex {
  /** Seq and file offset of record lines 0, STRIDE, 2 x STRIDE, ... (in the order written: seqs ascend). */
  private readonly seqs: number[] = [];
  private readonly offsets: number[] = [];
  private written = 0;
  /** The newest seq indexed (-1 before any). */
  lastSeq = -1;
  /** The offset just past the last indexed line: reads stop there (the file may grow meanwhile). */
  private end = 0;

  /** The writer of the file: its lines still batched reach the file before a read. */
  private writer: { flushed(): Promise<void> } | null = null;

  constructor(readonly file: string) {}

  attachWriter(writer: { flushed(): Promise<void> }): void {
    this.writer = writer;
  }

  /** A record line of `seq` was written at `offset`, ending at `end`. */
  add(seq: number, offset: number, end: number): void {
    if (seq <= this.lastSeq) return;
    if (this.written % INDEX_STRIDE === 0) {
      this.seqs.push(seq);
      this.offsets.push(offset);
    }
    this.written += 1;
    this.lastSeq = seq;
    this.end = end;
  }

  /** Units indexed. */
  get size(): number {
    return this.written;
  }

  get firstSeq(): number | undefined {
    return this.seqs[0];
  }

  /** The record and bytes of one unit, or undefined when the trace does not hold it. */
  async read(seq: number): Promise<RecordEvent | undefined> {
    const got = await this.range(seq, 1);
    return got[0]?.record.seq === seq ? got[0] : undefined;
  }

  /** The indexed units with seq in [from, from + count), oldest first. */
  async range(from: number, count: number): Promise<RecordEvent[]> {
    const to = from + count;
    if (count <= 0 || this.seqs.length === 0 || from > this.lastSeq || to <= this.seqs[0]!) return [];
    // The last stride pair at or before `from`.
    let lo = 0;
    let hi = this.seqs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.seqs[mid]! <= from) lo = mid;
      else hi = mid - 1;
    }
    const end = this.end;
    await this.writer?.flushed();
    const out: RecordEvent[] = [];
    for await (const e of recordLines(this.file, this.offsets[lo]!, end)) {
      if (e.record.seq >= to) break;
      if (e.record.seq >= from) out.push(e);
    }
    return out;
  }
}

/** The record events of the file's lines in [start, end) (other events skipped). */
async function* recordLines(file: string, start: number, end: number): AsyncGenerator<RecordEvent> {
  const fh = await fs.promises.open(file, 'r');
  try {
    let pos = start;
    let carry: Buffer = Buffer.alloc(0);
    while (pos < end) {
      const want = Math.min(READ_CHUNK, end - pos);
      const chunk = Buffer.allocUnsafe(want);
      const { bytesRead } = await fh.read(chunk, 0, want, pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
      let buf = carry.length
        ? Buffer.concat([carry, chunk.subarray(0, bytesRead)])
        : chunk.subarray(0, bytesRead);
      for (;;) {
        const nl = buf.indexOf(0x0a);
        if (nl < 0) break;
        const line = buf.subarray(0, nl);
        buf = buf.subarray(nl + 1);
        // Only record lines are decoded: a cheap look at the type before the JSON parse.
        if (line.indexOf('"type":"record"') < 0) continue;
        const e = decodeEventLine(line.toString('utf8'), 0);
        if (e.type !== 'record') continue;
        yield e;
      }
      carry = Buffer.from(buf);
    }
  } catch (e) {
    if (e instanceof TraceError) throw e;
    throw new TraceError('BAD_EVENT', `reading the session's trace failed: ${(e as Error).message}`);
  } finally {
    await fh.close();
  }
}
