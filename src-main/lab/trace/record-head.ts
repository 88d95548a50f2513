// A record line's head: the event's JSON up to its captured bytes' base64
// (encodeEventLineParts writes the bytes last: `..."bytes":"<base64>"}`).
// The records list needs a unit's record only, so a page of it is read from
// the heads and never parses the base64: a 64 KiB capture is 87 KB of it,
// and 2,000 model-sized units would be 170 MB of JSON for 2,000 summaries.
import { TraceError } from './errors';
import type { RecordEvent } from './format';
import { checkRecordFields, parseJson } from './ndjson-codec';

const BYTES_KEY = Buffer.from('"bytes":"');
/** What follows a record line's base64: `"}` and the newline. */
const TAIL_BYTES = 3;

export type RecordHead = Omit<RecordEvent, 'bytes'>;

/** The length of a record line's head, from the line's length and the bytes it captured. */
export function recordHeadLength(lineBytes: number, captured: number): number {
  return lineBytes - 4 * Math.ceil(captured / 3) - TAIL_BYTES;
}

/** A record line's head (through `"bytes":"`), or undefined for a line that is no record's. */
export function headOfLine(line: Buffer): Buffer | undefined {
  // Base64 and the tail hold no quote: the key's last occurrence is where the bytes begin.
  const at = line.lastIndexOf(BYTES_KEY);
  if (at < 0) return undefined;
  const head = line.subarray(0, at + BYTES_KEY.length);
  return head.indexOf('"type":"record"') < 0 ? undefined : head;
}

/** The record event a head holds, checked as decodeEventLine checks it (its bytes aside). */
export function decodeRecordHead(head: Buffer, line = 0): RecordHead {
  const keyAt = head.length - BYTES_KEY.length;
  if (keyAt < 1 || !head.subarray(keyAt).equals(BYTES_KEY))
    throw new TraceError('BAD_EVENT', "a record line's head must end where its bytes begin", line);
  // The event less its bytes: the head without the key (and the comma before it), closed.
  const open = head.toString('utf8', 0, keyAt);
  const obj = parseJson(open.endsWith(',') ? `${open.slice(0, -1)}}` : `${open}}`, line);
  if (obj.type !== 'record') throw new TraceError('BAD_EVENT', 'a head of a line that is no record', line);
  if (typeof obj.t !== 'number' || !Number.isFinite(obj.t))
    throw new TraceError('BAD_EVENT', 'event.t must be a finite number', line);
  checkRecordFields(obj, line);
  return obj as unknown as RecordHead;
}
