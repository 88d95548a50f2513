// A pcap stream read as it arrives: records cut anywhere by the pipe come out whole, in order;
// a hostile record length and a foreign magic are named errors.
import { describe, expect, it } from 'vitest';
import { MAX_RECORD_BYTES, PcapStreamReader } from './pcap-stream';

function pcap(records: Uint8Array[]): Uint8Array {
  const head = Buffer.alloc(24);
  head.writeUInt32LE(0xa1b2c3d4, 0);
  head.writeUInt16LE(2, 4);
  head.writeUInt16LE(4, 6);
  head.writeUInt32LE(262144, 16);
  head.writeUInt32LE(1, 20);
  const parts: Buffer[] = [head];
  records.forEach((r, i) => {
    const h = Buffer.alloc(16);
    h.writeUInt32LE(100 + i, 0);
    h.writeUInt32LE(250_000, 4);
    h.writeUInt32LE(r.length, 8);
    h.writeUInt32LE(r.length, 12);
    parts.push(h, Buffer.from(r));
  });
  return Buffer.concat(parts);
}

describe('pcap stream reader', () => {
  const records = [Buffer.from('first'), Buffer.alloc(3000, 7), Buffer.from('third')];
  const bytes = pcap(records);

  it('gives the same records whatever the pipe cut, with their times', () => {
    for (const cut of [1, 7, 16, 23, 24, 25, 100, 1000, bytes.length]) {
      const reader = new PcapStreamReader();
      const got = [];
      for (let at = 0; at < bytes.length; at += cut) got.push(...reader.push(bytes.subarray(at, at + cut)));
      expect(got.map((p) => Buffer.from(p.data))).toEqual(records);
      expect(got.map((p) => p.time)).toEqual([100250, 101250, 102250]);
      expect(got.every((p) => p.linkType === 1)).toBe(true);
    }
  });

  it('names a record longer than any capture it starts, and a stream that is not pcap', () => {
    const hostile = Buffer.from(bytes.subarray(0, 40));
    hostile.writeUInt32LE(MAX_RECORD_BYTES + 1, 24 + 8);
    expect(() => new PcapStreamReader().push(hostile)).toThrow(/pcap record of 16777217 bytes/);
    expect(() => new PcapStreamReader().push(Buffer.alloc(24, 1))).toThrow(/not a pcap stream/);
  });
});
