// A record line's head: the record it holds without the base64 after it, its
// length known from the line's, and bad heads a named error.
import { describe, expect, it } from 'vitest';
import type { RecordEvent } from './format';
import { decodeEventLine, encodeEventLine } from './ndjson-codec';
import { decodeRecordHead, headOfLine, recordHeadLength } from './record-head';
import { TraceError } from './errors';

const event: RecordEvent = {
  type: 'record',
  t: 12.5,
  record: {
    seq: 7,
    t: 12.5,
    link: 'h0.uplink.data',
    dir: 'up',
    layer: 'mux',
    kind: 'HostFrame',
    length: 4 * 1024 * 1024,
    captured: 5,
    verdict: 'ok',
    summary: 'a "quoted" summary, "bytes":"not these", é',
  },
  bytes: Uint8Array.from([1, 2, 3, 4, 5]),
};

describe('record heads', () => {
  it('hold the record of the line, and end where its base64 starts', () => {
    const line = Buffer.from(encodeEventLine(event));
    const head = headOfLine(line.subarray(0, line.length - 1))!;
    expect(head.length).toBe(recordHeadLength(line.length, 5));
    const { bytes: _bytes, ...rest } = decodeEventLine(line.toString('utf8').trimEnd(), 1) as RecordEvent;
    expect(decodeRecordHead(head)).toEqual(rest);
  });

  it('are none on a line that is no record', () => {
    expect(headOfLine(Buffer.from(JSON.stringify({ type: 'log', t: 0, level: 'info', message: 'x' })))).toBe(
      undefined,
    );
  });

  it('that are cut or malformed are a named error', () => {
    const head = headOfLine(Buffer.from(encodeEventLine(event)))!;
    for (const bad of [head.subarray(0, head.length - 3), Buffer.from('{"type":"record","bytes":"')])
      expect(() => decodeRecordHead(bad, 3)).toThrow(TraceError);
    const noSeq = Buffer.from(head.toString().replace('"seq":7,', ''));
    expect(() => decodeRecordHead(noSeq, 3)).toThrow(/line 3: record.seq must be/);
  });
});
