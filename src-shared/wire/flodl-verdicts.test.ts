// Issue 8: the verdicts flodl 0.7's own relay/mux.rs reaches, at flodl's
// moment, with flodl's wording. Table-driven with the exact reproducer bytes
// of the two tables (zero salt), plus a property: no decoder or reader
// judges a mux header before its 25th byte.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BincodeReader } from './bincode';
import { hexToBytes } from './bytes';
import { MUX_HEADER_LEN } from './constants';
import { dissect } from './dissect';
import { WireError } from './errors';
import { tagAsU64 } from './flodl-text';
import { LenFrameReader } from './len-frame-reader';
import { decodeLenFrame, encodeLenPrefix } from './len-frame';
import { nobleMac } from './mac';
import { decodeMuxRecord, encodeMuxRecord, finishMuxRecord } from './mux';
import { MuxReader } from './mux-reader';

const ZERO = nobleMac(new Uint8Array(16));
const PEER_CLOSED = 'relay_mux: peer closed mid-frame (committed read hit EOF)';

function thrown(f: () => unknown): WireError {
  try {
    f();
  } catch (e) {
    if (e instanceof WireError) return e;
    throw e;
  }
  throw new Error('expected a WireError, nothing was thrown');
}

// Issue 8, table 1: a header cut short. flodl: read_from = clean end,
// try_read_from = "peer closed mid-frame"; never BAD_MAGIC/BAD_VERSION/OVER_CEILING.
const SHORT_HEADERS = [
  ['d0170de1', 'BAD_MAGIC'],
  ['d0170df101000100', 'BAD_VERSION'],
  ['d0170df101000000030000000001000040', 'OVER_CEILING'],
] as const;

describe('issue 8 table 1: a header cut short is judged only at its 25th byte', () => {
  it.each(SHORT_HEADERS)('%s: decode is TRUNCATED (peer closed mid-frame), not %s', (hex) => {
    const e = thrown(() => decodeMuxRecord(hexToBytes(hex), ZERO));
    expect(e.code).toBe('TRUNCATED');
    expect(e.flodlMessage).toBe(PEER_CLOSED);
  });

  it.each(SHORT_HEADERS)('%s: the stream reader waits, committed (as try_read_from)', (hex) => {
    const bytes = hexToBytes(hex);
    let t = 0;
    const r = new MuxReader({ now: () => t });
    for (const b of bytes) expect(r.push(Uint8Array.of(b))).toEqual([]);
    expect(r.status()).toMatchObject({ state: 'committed', buffered: bytes.length });
    // A peer that stalls is waited for until the 60 s deadline: STARVED, in flodl's words.
    t = 59_999;
    expect(r.checkStarvation()).toBeNull();
    t = 60_000;
    const starved = r.checkStarvation()!;
    expect(starved.code).toBe('STARVED');
    expect(starved.flodlMessage).toBe(
      `relay_mux: committed read starved mid-frame for 60s (${bytes.length - 1}/24 bytes); peer presumed gone`,
    );
  });

  it.each(SHORT_HEADERS)(
    '%s: a close is "peer closed mid-frame" (try_read_from) or a clean end (read_from)',
    (hex) => {
      const poll = new MuxReader();
      poll.push(hexToBytes(hex));
      const e = thrown(() => poll.end());
      expect(e.code).toBe('TRUNCATED');
      expect(e.flodlMessage).toBe(PEER_CLOSED);
      const blocking = new MuxReader();
      blocking.push(hexToBytes(hex));
      expect(() => blocking.end({ cleanInHeader: true })).not.toThrow();
    },
  );

  it.each(SHORT_HEADERS)(
    '%s: the dissector may say early what it sees, as information only',
    (hex, early) => {
      const d = dissect('mux', hexToBytes(hex));
      expect(d.verdict).toBe('TRUNCATED');
      expect(d.notes?.join(' ')).toMatch(/cannot start a valid mux record/);
      expect(d.notes?.join(' ')).toMatch(
        early === 'BAD_MAGIC' ? /magic/ : early === 'BAD_VERSION' ? /version/ : /ceiling/,
      );
    },
  );

  it('completed to 25 bytes, each reaches its verdict with flodl text', () => {
    const pad = (hex: string) => {
      const b = new Uint8Array(MUX_HEADER_LEN);
      b.set(hexToBytes(hex));
      return b;
    };
    const cases: [string, string, string][] = [
      ['d0170de1', 'BAD_MAGIC', 'relay_mux: record magic 0xe10d17d0 != 0xf10d17d0'],
      ['d0170df101000100', 'BAD_VERSION', 'relay_mux: record version 65537 != 1'],
      [
        'd0170df101000000030000000001000040',
        'OVER_CEILING',
        'relay_mux: record payload_len 1073741825 exceeds the frame ceiling 1073741824 (kind=0x03, rank=0); corrupt or hostile peer, or a model that has outgrown the frame ceiling',
      ],
    ];
    for (const [hex, code, text] of cases) {
      const e = thrown(() => decodeMuxRecord(pad(hex), ZERO));
      expect([e.code, e.flodlMessage]).toEqual([code, text]);
      const r = new MuxReader();
      const re = thrown(() => r.push(pad(hex)));
      expect([re.code, re.flodlMessage]).toEqual([code, text]);
    }
  });

  it('the magic of issue 8 prints as flodl does (0x%08x of the LE u32)', () => {
    const b = new Uint8Array(MUX_HEADER_LEN);
    b.set(hexToBytes('28526d67'));
    expect(thrown(() => decodeMuxRecord(b, ZERO)).flodlMessage).toBe(
      'relay_mux: record magic 0x676d5228 != 0xf10d17d0',
    );
  });
});

// Issue 8, table 2: bincode 2's integer widths. Each is a correctly tagged Control record.
const WIDE_MARKERS = [
  ['d0170df1010000000200000000090000006d1e5504605d3fcafd0100000000000000', 'HelloAck (index as u64)'],
  [
    'd0170df10100000002000000000a00000006bcb1c9aade870602fd0000000000000000',
    'RankExit{rank:0} (rank as u64)',
  ],
  ['d0170df10100000002000000000c0000007c924bf742b4a0f6000001fd0700000000000000', 'Hello{host:"",ranks:[7]}'],
] as const;

describe('issue 8 table 2: a varint marker wider than its target is bincode InvalidIntegerType', () => {
  it.each(WIDE_MARKERS)('%s (%s) is "bincode decode failed"', (hex) => {
    const bytes = hexToBytes(hex);
    const e = thrown(() => decodeMuxRecord(bytes, ZERO));
    expect(e.code).toBe('BAD_PAYLOAD');
    expect(e.flodlMessage).toBe(
      'relay_mux: bincode decode failed: InvalidIntegerType { expected: U32, found: U64 }',
    );
    // The stream path (reader, then finish_read's tail) reaches the same verdict.
    const [unit] = new MuxReader().push(bytes);
    const e2 = thrown(() =>
      finishMuxRecord(unit.subarray(0, MUX_HEADER_LEN), unit.subarray(MUX_HEADER_LEN), ZERO),
    );
    expect([e2.code, e2.flodlMessage]).toEqual([e.code, e.flodlMessage]);
    expect(dissect('mux', bytes).verdict).toBe('BAD_PAYLOAD');
  });

  it.each([
    // [hex, target, bincode text]: each target against each wider marker, as bincode 2.0 words it.
    ['fc00000100', 'u16', 'InvalidIntegerType { expected: U16, found: U32 }'],
    ['fd0000000000000000', 'u16', 'InvalidIntegerType { expected: U16, found: U64 }'],
    ['fe', 'u16', 'InvalidIntegerType { expected: U16, found: U128 }'],
    ['fd0100000000000000', 'u32', 'InvalidIntegerType { expected: U32, found: U64 }'],
    ['fe', 'u32', 'InvalidIntegerType { expected: U32, found: U128 }'],
    ['ff', 'u32', 'InvalidIntegerType { expected: U32, found: Reserved }'],
    // u64: bincode's slow path (fewer than 9 bytes left) names U64 ...
    ['fe', 'u64', 'InvalidIntegerType { expected: U64, found: U128 }'],
    // ... and its fast path (9 or more bytes left) names U32: a quirk of bincode 2.0, mirrored.
    ['fe0000000000000000', 'u64', 'InvalidIntegerType { expected: U32, found: U128 }'],
    ['fe', 'usize', 'InvalidIntegerType { expected: Usize, found: U128 }'],
    ['fb01', 'u32', 'UnexpectedEnd { additional: 1 }'],
  ] as const)('%s as %s: %s', (hex, target, text) => {
    const r = new BincodeReader(hexToBytes(hex));
    const read = { u16: () => r.u16(), u32: () => r.u32(), u64: () => r.u64(), usize: () => r.length() }[
      target
    ];
    expect(thrown(read).flodlMessage).toBe(text);
  });

  it('narrower markers and non-minimal forms are accepted; u8 is one raw byte', () => {
    expect(new BincodeReader(hexToBytes('fb0500')).u32()).toBe(5);
    expect(new BincodeReader(hexToBytes('fc07000000')).u64()).toBe(7n);
    expect(new BincodeReader(hexToBytes('fd')).u8()).toBe(0xfd);
  });

  it('an unknown variant index, a bad UTF-8 host and a bad Option tag are worded as bincode/serde word them', () => {
    const mux = (payload: string) => thrown(() => decodeMuxRecord(recordWith(payload), ZERO)).flodlMessage;
    expect(mux('05')).toBe(
      'relay_mux: bincode decode failed: OtherString("invalid value: integer `5`, expected variant index 0 <= i < 4")',
    );
    expect(mux('0002c328')).toBe(
      'relay_mux: bincode decode failed: Utf8 { inner: Utf8Error { valid_up_to: 0, error_len: Some(1) } }',
    );
    expect(mux('02')).toBe('relay_mux: bincode decode failed: UnexpectedEnd { additional: 1 }');
  });
});

/** A Control record (zero salt) around an arbitrary payload. */
function recordWith(payloadHex: string): Uint8Array {
  const payload = hexToBytes(payloadHex);
  const rec = encodeMuxRecord({ kind: 'Data', rank: 0, payload }, ZERO);
  rec[8] = 0x02;
  rec.set(ZERO.tag(rec.subarray(0, 17), payload), 17);
  return rec;
}

describe('flodl wording of the other finish_read rejections', () => {
  it('HMAC: computed and carried tags as flodl u64s (first 8 bytes LE), 0x%016x', () => {
    const rec = encodeMuxRecord({ kind: 'Data', rank: 7, payload: hexToBytes('deadbeef') }, ZERO);
    rec[rec.length - 1] ^= 1;
    const computed = ZERO.tag(rec.subarray(0, 17), rec.subarray(25));
    const e = thrown(() => decodeMuxRecord(rec, ZERO));
    const hex16 = (t: Uint8Array) => `0x${tagAsU64(t).toString(16).padStart(16, '0')}`;
    expect(e.flodlMessage).toBe(
      `relay_mux: HMAC verification failed (computed ${hex16(computed)}, wire carried ${hex16(rec.subarray(17, 25))}); session salt disagreement, tampered record, or corruption (kind=0x01, rank=7, len=4)`,
    );
    expect(tagAsU64(hexToBytes('0100000000000080'))).toBe(0x8000000000000001n);
  });

  it('unknown kind after the MAC', () => {
    const rec = recordWith('01');
    rec[8] = 0x05;
    rec.set(ZERO.tag(rec.subarray(0, 17), rec.subarray(25)), 17);
    const e = thrown(() => decodeMuxRecord(rec, ZERO));
    expect([e.code, e.flodlMessage]).toEqual(['UNKNOWN_KIND', 'relay_mux: unknown record kind 0x05']);
  });

  it('len frames: prefix judged at its 4th byte; write_len_prefix checks the ceiling before the u32 width', () => {
    const r = new LenFrameReader({ ceiling: 100 });
    expect(r.push(hexToBytes('650000'))).toEqual([]);
    const e = thrown(() => r.push(hexToBytes('00')));
    expect(e.flodlMessage).toBe(
      'relay_mux: len-framed blob length 101 exceeds the frame ceiling 100; corrupt or hostile peer',
    );
    expect(thrown(() => decodeLenFrame(hexToBytes('0500')))).toMatchObject({
      code: 'TRUNCATED',
      flodlMessage: PEER_CLOSED,
    });
    expect(thrown(() => encodeLenPrefix(2 ** 32, 2 ** 40)).flodlMessage).toBe(
      'relay_mux: len-framed blob too large: 4294967296 bytes (max 4294967295)',
    );
    expect(thrown(() => encodeLenPrefix(2 ** 32, 2 ** 31)).flodlMessage).toBe(
      'relay_mux: len-framed blob length 4294967296 exceeds the frame ceiling 2147483648; model has outgrown the frame ceiling (see wire::frame_ceiling)',
    );
    const clean = new LenFrameReader();
    clean.push(hexToBytes('0500'));
    expect(() => clean.end({ cleanInPrefix: true })).not.toThrow();
    const poll = new LenFrameReader();
    poll.push(hexToBytes('0500'));
    expect(thrown(() => poll.end()).flodlMessage).toBe(PEER_CLOSED);
  });
});

describe('property: a mux header is never judged before its 25th byte', () => {
  it('any 1..24 bytes: decode says TRUNCATED, the reader holds them committed, the 25th byte decides', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: MUX_HEADER_LEN, maxLength: 60 }),
        fc.integer({ min: 1, max: 24 }),
        (bytes, cut) => {
          const prefix = bytes.subarray(0, cut);
          expect(thrown(() => decodeMuxRecord(prefix, ZERO)).code).toBe('TRUNCATED');
          const r = new MuxReader({ ceiling: 1 << 20 });
          for (let i = 0; i < cut; i++) expect(r.push(bytes.subarray(i, i + 1))).toEqual([]);
          expect(r.status()).toMatchObject({ state: 'committed', buffered: cut });
          expect(dissect('mux', prefix).verdict).toBe('TRUNCATED');
          // Byte by byte up to 24 nothing throws; whatever the 25th byte brings is a header verdict or progress.
          for (let i = cut; i < MUX_HEADER_LEN - 1; i++) r.push(bytes.subarray(i, i + 1));
          try {
            r.push(bytes.subarray(MUX_HEADER_LEN - 1, MUX_HEADER_LEN));
          } catch (e) {
            expect(e).toBeInstanceOf(WireError);
            expect(['BAD_MAGIC', 'BAD_VERSION', 'OVER_CEILING']).toContain((e as WireError).code);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
