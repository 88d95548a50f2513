// Adds events to a trace that was already closed: they go before its end
// line, whose event count is raised to match, so the trace still reads as
// closed cleanly. Used for what is only known after a run (a reproduction's
// decisive unit, named once the run is judged). Only the end line is
// rewritten: the file is cut where it starts and the new lines appended.
import fs from 'node:fs/promises';
import type { EndEvent, TraceEvent } from './format';
import { decodeEventLine, encodeEventLine } from './ndjson-codec';

/** The end line is short; a tail this long always holds it whole. */
const TAIL_BYTES = 4096;

export async function appendBeforeEnd(file: string, events: readonly TraceEvent[]): Promise<void> {
  if (events.length === 0) return;
  const fh = await fs.open(file, 'r+');
  try {
    const { size } = await fh.stat();
    const from = Math.max(0, size - TAIL_BYTES);
    const tail = Buffer.alloc(size - from);
    await fh.read(tail, 0, tail.length, from);
    // The last line (the file ends with its newline when the writer closed it).
    const body = tail[tail.length - 1] === 0x0a ? tail.subarray(0, -1) : tail;
    const start = body.lastIndexOf(0x0a) + 1;
    let end: EndEvent | null = null;
    try {
      const last = decodeEventLine(body.subarray(start).toString('utf8'), 0);
      if (last.type === 'end') end = last;
    } catch {
      // A cut last line: not an end line; the events go after it on a line of their own.
    }
    const lines = events.map(encodeEventLine);
    if (end) {
      lines.push(encodeEventLine({ ...end, events: end.events + events.length }));
      await fh.truncate(from + start);
      await fh.write(lines.join(''), from + start);
    } else {
      const sep = tail.length > 0 && tail[tail.length - 1] !== 0x0a ? '\n' : '';
      await fh.write(sep + lines.join(''), size);
    }
  } finally {
    await fh.close();
  }
}
