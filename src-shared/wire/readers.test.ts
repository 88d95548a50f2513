// Incremental readers: every vector split at every byte offset, records back
// to back, hostile lengths rejected before buffering, starvation, streamed
// mode, and the labelled historical NaiveReader.
import { describe, expect, it } from 'vitest';
import { bytesToHex, concatBytes, hexToBytes, writeU32LE } from './bytes';
import {
  CONTROL_HANDSHAKE_LEN,
  DATA_ACK_LEN,
  DATA_HANDSHAKE_LEN,
  CONTROL_ACK_LEN,
  DEFAULT_FRAME_CEILING,
  REC_HOST_FRAME,
} from './constants';
import { encodeLenFrame } from './len-frame';
import { nobleMac } from './mac';
import { decodeMuxRecord, encodeMuxRecord, streamModelSizedKinds } from './index';
import {
  FixedReader,
  LenFrameReader,
  MuxReader,
  NaiveReader,
  NAIVE_READER_LABEL,
  type FrameSink,
} from './readers';
import { RoundFrameStreamParser } from './round-frame-stream';
import { SALT_A, VECTORS, codeOf } from './test-helpers';

/** Splits at `cut`, pushes both parts, then signals the end of the stream. */
function feedSplit(
  reader: { push(c: Uint8Array): Uint8Array[]; end(): void },
  bytes: Uint8Array,
  cut: number,
): Uint8Array[] {
  const out = [...reader.push(bytes.subarray(0, cut)), ...reader.push(bytes.subarray(cut))];
  reader.end();
  return out;
}

describe('every vector split at every byte offset', () => {
  for (const v of VECTORS) {
    const bytes = hexToBytes(v.hex);
    const mac = nobleMac(hexToBytes(v.salt));
    it(`${v.name} (${v.expect})`, () => {
      for (let cut = 0; cut <= bytes.length; cut++) {
        switch (v.unit.layer) {
          case 'mux': {
            const r = new MuxReader({ ceiling: DEFAULT_FRAME_CEILING });
            if (v.expect === 'ok') {
              const units = feedSplit(r, bytes, cut);
              expect(units.length).toBe(1);
              expect(bytesToHex(units[0])).toBe(v.hex);
              expect(decodeMuxRecord(units[0], mac).kind).toBe(v.unit.kind);
            } else {
              // Header-level rejections come from the reader itself; MAC ones from the decode of the whole unit.
              const code = codeOf(() => feedSplit(r, bytes, cut).forEach((u) => decodeMuxRecord(u, mac)));
              expect(code).toBe(v.expect);
            }
            break;
          }
          case 'lenframe': {
            const r = new LenFrameReader();
            if (v.expect === 'ok') expect(feedSplit(r, bytes, cut).map(bytesToHex)).toEqual([v.hex]);
            else expect(codeOf(() => feedSplit(r, bytes, cut))).toBe(v.expect);
            break;
          }
          case 'roundframe':
          case 'controlframe': {
            // These travel len-framed on the loopback: split the framed form too.
            const framed = encodeLenFrame(bytes);
            for (const c of [cut, cut + 4]) {
              const got = feedSplit(new LenFrameReader(), framed, c);
              expect(got.map((u) => bytesToHex(LenFrameReader.blobOf(u)))).toEqual([v.hex]);
            }
            if (v.unit.layer === 'roundframe') {
              const p = new RoundFrameStreamParser(mac, { totalLen: bytes.length });
              expect(p.push(bytes.subarray(0, cut)) + p.push(bytes.subarray(cut))).toBe(bytes.length);
              p.end();
              expect(p.done).toBe(true);
            }
            break;
          }
          case 'handshake': {
            const r = new FixedReader(bytes.length);
            const a = r.push(bytes.subarray(0, cut));
            const b = r.push(concatBytes(bytes.subarray(cut), hexToBytes('abcd')));
            const unit = a.unit ?? b.unit;
            expect(bytesToHex(unit!)).toBe(v.hex);
            expect(bytesToHex(b.rest)).toBe('abcd');
            expect([DATA_HANDSHAKE_LEN, DATA_ACK_LEN, CONTROL_HANDSHAKE_LEN, CONTROL_ACK_LEN]).toContain(
              bytes.length,
            );
            break;
          }
        }
      }
    });
  }

  it('one byte at a time', () => {
    const all = VECTORS.filter((v) => v.expect === 'ok' && v.unit.layer === 'mux').map((v) =>
      hexToBytes(v.hex),
    );
    const stream = concatBytes(...all);
    const r = new MuxReader();
    const got: string[] = [];
    for (let i = 0; i < stream.length; i++) got.push(...r.push(stream.subarray(i, i + 1)).map(bytesToHex));
    expect(got).toEqual(all.map(bytesToHex));
    expect(r.status().state).toBe('idle');
  });
});

describe('records back to back', () => {
  const mux = VECTORS.filter((v) => v.expect === 'ok' && v.unit.layer === 'mux').map((v) =>
    hexToBytes(v.hex),
  );

  it('many mux records in one buffer come out in order (5.1 item 7)', () => {
    const units = Array.from({ length: 50 }, (_, i) => mux[i % mux.length]);
    const r = new MuxReader();
    const got = r.push(concatBytes(...units));
    expect(got.map(bytesToHex)).toEqual(units.map(bytesToHex));
    r.end();
  });

  it('the same stream in random chunk sizes', () => {
    const units = Array.from({ length: 40 }, (_, i) => mux[(i * 7) % mux.length]);
    const stream = concatBytes(...units);
    let seed = 12345;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) >>> 0) % n;
    for (let trial = 0; trial < 20; trial++) {
      const r = new MuxReader();
      const got: Uint8Array[] = [];
      for (let pos = 0; pos < stream.length;) {
        const n = 1 + rand(60);
        got.push(...r.push(stream.subarray(pos, pos + n)));
        pos += n;
      }
      expect(got.map(bytesToHex)).toEqual(units.map(bytesToHex));
    }
  });

  it('len-framed blobs in sequence, then a clean EOF (5.1 item 17)', () => {
    const blobs = [[1], [2, 2], [3, 3, 3], [], new Array(100).fill(4)].map((a) => Uint8Array.from(a));
    const r = new LenFrameReader();
    const got = r.push(concatBytes(...blobs.map((b) => encodeLenFrame(b))));
    expect(got.map((u) => Array.from(LenFrameReader.blobOf(u)))).toEqual(blobs.map((b) => Array.from(b)));
    expect(r.status().state).toBe('idle');
    expect(() => r.end()).not.toThrow();
  });

  it('an empty stream is a clean EOF (5.1 items 12-13, 18)', () => {
    expect(() => new MuxReader().end()).not.toThrow();
    expect(() => new LenFrameReader().end()).not.toThrow();
    expect(new MuxReader().push(new Uint8Array(0))).toEqual([]);
  });
});

describe('hostile lengths', () => {
  it('an over-ceiling prefix is rejected on its 4th byte, before anything else is buffered', () => {
    const r = new LenFrameReader({ ceiling: 1024 });
    expect(r.push(hexToBytes('010400'))).toEqual([]);
    expect(codeOf(() => r.push(hexToBytes('00')))).toBe('OVER_CEILING');
    expect(codeOf(() => r.push(hexToBytes('00')))).toBe('OVER_CEILING');
  });

  it('an over-ceiling mux payload_len is rejected on the 25th header byte, as flodl (not on the 17th)', () => {
    const h = hexToBytes('d0170df1010000000000000000ffffffff0000000000000000');
    const r = new MuxReader();
    expect(r.push(h.subarray(0, 24))).toEqual([]);
    expect(codeOf(() => r.push(h.subarray(24, 25)))).toBe('OVER_CEILING');
  });

  it('a bad magic is rejected only once the 25-byte header is complete', () => {
    const r = new MuxReader();
    expect(r.push(hexToBytes('2f170df1'))).toEqual([]);
    expect(r.status().state).toBe('committed');
    expect(codeOf(() => r.push(new Uint8Array(21)))).toBe('BAD_MAGIC');
  });

  it('a length at the ceiling only ever holds the bytes that arrived', () => {
    const before = process.memoryUsage().arrayBuffers;
    const r = new LenFrameReader({ ceiling: DEFAULT_FRAME_CEILING });
    const prefix = new Uint8Array(4);
    writeU32LE(prefix, 0, DEFAULT_FRAME_CEILING);
    r.push(prefix);
    for (let i = 0; i < 16; i++) r.push(new Uint8Array(64 * 1024));
    expect(r.status()).toMatchObject({ state: 'committed', buffered: 4 + 16 * 64 * 1024 });
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(64 * 1024 * 1024);
  });
});

describe('status and starvation (4.1)', () => {
  it('idle vs committed, with the time of the last progress', () => {
    let t = 1000;
    const r = new MuxReader({ now: () => t });
    const rec = encodeMuxRecord({ kind: 'Data', rank: 1, payload: hexToBytes('0102') }, nobleMac(SALT_A));
    expect(r.status()).toEqual({ state: 'idle', buffered: 0, lastProgressAt: 1000 });
    t = 2000;
    r.push(rec.subarray(0, 1));
    expect(r.status()).toEqual({ state: 'committed', buffered: 1, lastProgressAt: 2000 });
    t = 61_999;
    expect(r.checkStarvation()).toBeNull();
    t = 62_000;
    const starved = r.checkStarvation();
    expect(starved?.code).toBe('STARVED');
    expect(starved?.message).toMatch(/committed read starved mid-frame/);
    r.push(rec.subarray(1, 26));
    expect(r.checkStarvation()).toBeNull();
    expect(r.status()).toMatchObject({ state: 'committed', buffered: 26, lastProgressAt: 62_000 });
    r.push(rec.subarray(26));
    expect(r.status().state).toBe('idle');
    t = 10_000_000;
    expect(r.checkStarvation()).toBeNull();
  });

  it('the blocking read_from rule: EOF inside the mux header is clean, inside the payload it is not', () => {
    const rec = encodeMuxRecord({ kind: 'Data', rank: 1, payload: hexToBytes('0102') }, nobleMac(SALT_A));
    const a = new MuxReader();
    a.push(rec.subarray(0, 10));
    expect(() => a.end({ cleanInHeader: true })).not.toThrow();
    const b = new MuxReader();
    b.push(rec.subarray(0, 26));
    expect(() => b.end({ cleanInHeader: true })).toThrow(/peer closed mid-frame/);
    const c = new MuxReader();
    c.push(rec.subarray(0, 10));
    expect(() => c.end()).toThrow(/peer closed mid-frame/);
  });

  it('a close mid-frame is TRUNCATED ("peer closed mid-frame")', () => {
    const r = new LenFrameReader();
    r.push(hexToBytes('0500000010'));
    expect(() => r.end()).toThrow(/peer closed mid-frame/);
  });
});

describe('streamed mode', () => {
  const mac = nobleMac(SALT_A);
  const payload = Uint8Array.from({ length: 5000 }, (_, i) => i & 0xff);
  const host = encodeMuxRecord({ kind: 'HostFrame', payload }, mac);
  const ctl = encodeMuxRecord({ kind: 'Control', msg: { type: 'HelloAck' } }, mac);

  function collector() {
    const events: string[] = [];
    const parts: Uint8Array[] = [];
    const sink: FrameSink = {
      onStart: (len, header) =>
        events.push(`start ${len} header ${header.length}${header.length > 8 ? ` kind ${header[8]}` : ''}`),
      onChunk: (b) => parts.push(b.slice()),
      onEnd: () => events.push('end'),
    };
    return { events, parts, sink };
  }

  it('HostFrame payloads stream chunk by chunk and are MAC-verified; small records stay buffered', () => {
    const c = collector();
    const r = new MuxReader({ sink: c.sink, streams: streamModelSizedKinds, mac });
    const stream = concatBytes(ctl, host, ctl);
    const units: Uint8Array[] = [];
    for (let pos = 0; pos < stream.length; pos += 333) units.push(...r.push(stream.subarray(pos, pos + 333)));
    expect(units.map(bytesToHex)).toEqual([bytesToHex(ctl), bytesToHex(ctl)]);
    expect(c.events).toEqual([`start 5000 header 25 kind ${REC_HOST_FRAME}`, 'end']);
    expect(c.parts.length).toBeGreaterThan(1);
    expect(bytesToHex(concatBytes(...c.parts))).toBe(bytesToHex(payload));
  });

  it('a tampered streamed payload fails before onEnd', () => {
    const c = collector();
    const r = new MuxReader({ sink: c.sink, mac });
    const bad = host.slice();
    bad[bad.length - 1] ^= 1;
    expect(codeOf(() => r.push(bad))).toBe('HMAC_MISMATCH');
    expect(c.events).toEqual([`start 5000 header 25 kind ${REC_HOST_FRAME}`]);
  });

  it('len-framed blobs stream too', () => {
    const c = collector();
    const r = new LenFrameReader({ sink: c.sink });
    const framed = encodeLenFrame(payload);
    expect(r.push(framed.subarray(0, 100))).toEqual([]);
    expect(r.push(framed.subarray(100))).toEqual([]);
    expect(c.events).toEqual(['start 5000 header 4', 'end']);
    expect(bytesToHex(concatBytes(...c.parts))).toBe(bytesToHex(payload));
  });
});

describe('NaiveReader (historical bug 6.1, labelled)', () => {
  const mac = nobleMac(SALT_A);
  const rec = encodeMuxRecord({ kind: 'Data', rank: 2, payload: hexToBytes('0102030405') }, mac);

  it('is labelled as the historical bug', () => {
    const r = new NaiveReader({ framing: 'mux' });
    expect(r.historical).toBe(true);
    expect(r.label).toBe(NAIVE_READER_LABEL);
    expect(r.label).toMatch(/historical bug/);
  });

  it('a timeout after part of a frame drops it and the next read starts mid-frame', () => {
    const naive = new NaiveReader({ framing: 'mux' });
    const fixed = new MuxReader();
    const first = rec.subarray(0, 10);
    const rest = concatBytes(rec.subarray(10), rec);
    naive.push(first);
    fixed.push(first);
    expect(naive.timeout()).toBe(10);
    // The fixed reader simply keeps the committed partial frame.
    expect(fixed.push(rest).map(bytesToHex)).toEqual([bytesToHex(rec), bytesToHex(rec)]);
    expect(codeOf(() => naive.push(rest))).toBe('BAD_MAGIC');
    expect(naive.droppedBytes).toBe(10);
  });

  it('a timeout while idle drops nothing', () => {
    const naive = new NaiveReader({ framing: 'len' });
    expect(naive.timeout()).toBe(0);
    expect(naive.push(encodeLenFrame(hexToBytes('09'))).length).toBe(1);
  });
});
