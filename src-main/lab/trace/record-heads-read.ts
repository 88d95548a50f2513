// Reads record heads (record-head.ts) from a trace file by byte ranges, as
// the record index plans them: the ranges known in advance with positioned
// reads all at once, then a last stretch of plain lines chunk by chunk until
// the caller has what it wants. Each head comes with where its line sits.
import type { FileHandle } from 'node:fs/promises';
import { decodeRecordHead, headOfLine, type RecordHead } from './record-head';

/** A byte range of the file: whole lines, or (with `lineEnd`) one long line's head. */
export interface Segment {
  start: number;
  end: number;
  /** Set for a long line's head: where the line ends. */
  lineEnd?: number;
}

export interface HeadAt {
  head: RecordHead;
  /** Where the unit's line starts and ends in the file (its newline included). */
  start: number;
  end: number;
}

/** The tail's first read; it doubles up to the largest (a page of small units is a few hundred KB). */
const FIRST_CHUNK = 16 * 1024;
const MAX_CHUNK = 256 * 1024;

export class HeadReader {
  /** Bytes read so far. */
  bytesRead = 0;

  constructor(private readonly fh: FileHandle) {}

  private async readAt(start: number, length: number): Promise<Buffer> {
    const buf = Buffer.allocUnsafe(length);
    const { bytesRead } = await this.fh.read(buf, 0, length, start);
    this.bytesRead += bytesRead;
    return buf.subarray(0, bytesRead);
  }

  /**
   * The heads in `fixed` (segments in file order, read in parallel), then those of the lines in
   * `tail`, read as the caller asks for more: it stops the walk when it has what it needs.
   */
  async *heads(fixed: readonly Segment[], tail: Segment): AsyncGenerator<HeadAt> {
    const bufs = await Promise.all(fixed.map((s) => this.readAt(s.start, s.end - s.start)));
    for (let i = 0; i < fixed.length; i++) {
      const s = fixed[i]!;
      const buf = bufs[i]!;
      if (s.lineEnd !== undefined) yield { head: decodeRecordHead(buf), start: s.start, end: s.lineEnd };
      else yield* headsOfLines(buf, s.start).heads;
    }
    let pos = tail.start;
    let chunk = FIRST_CHUNK;
    let carry = Buffer.alloc(0);
    while (pos < tail.end) {
      const got = await this.readAt(pos, Math.min(chunk, tail.end - pos));
      if (got.length === 0) break;
      pos += got.length;
      chunk = Math.min(MAX_CHUNK, chunk * 2);
      const buf = carry.length ? Buffer.concat([carry, got]) : got;
      const { heads, used } = headsOfLines(buf, pos - buf.length);
      yield* heads;
      carry = Buffer.from(buf.subarray(used));
    }
  }

  /** The bytes of [start, end): one unit's line read whole. */
  line(start: number, end: number): Promise<Buffer> {
    return this.readAt(start, end - start);
  }
}

/** The heads of the whole lines in `buf` (which starts at file offset `base`), and the bytes they take. */
function headsOfLines(buf: Buffer, base: number): { heads: HeadAt[]; used: number } {
  const heads: HeadAt[] = [];
  let pos = 0;
  for (;;) {
    const nl = buf.indexOf(0x0a, pos);
    if (nl < 0) break;
    const head = headOfLine(buf.subarray(pos, nl));
    if (head) heads.push({ head: decodeRecordHead(head), start: base + pos, end: base + nl + 1 });
    pos = nl + 1;
  }
  return { heads, used: pos };
}
