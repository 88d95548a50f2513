// WIRE.md 5.1 (relay/mux_tests.rs) items that concern the codec.
import { describe, expect, it } from 'vitest';
import { bytesToHex, concatBytes, hexToBytes, writeU32LE } from './bytes';
import { REC_BROADCAST, REC_HOST_FRAME } from './constants';
import { nobleMac } from './mac';
import { decodeMuxRecord, encodeMuxHeader, encodeMuxRecord, parseMuxHeader, type MuxRecord } from './mux';
import { SALT_A, SALT_B, codeOf } from './test-helpers';

const macA = nobleMac(SALT_A);
const macB = nobleMac(SALT_B);

const roundTrip = (rec: MuxRecord, mac = macA) => decodeMuxRecord(encodeMuxRecord(rec, mac), mac);

describe('MuxRecord (5.1)', () => {
  it('1-2. Data round-trips, including an empty payload, and consumes the whole buffer', () => {
    const rec: MuxRecord = { kind: 'Data', rank: 7, payload: hexToBytes('deadbeef001122') };
    expect(roundTrip(rec)).toEqual(rec);
    expect(roundTrip({ kind: 'Data', rank: 0, payload: new Uint8Array(0) })).toEqual({
      kind: 'Data',
      rank: 0,
      payload: new Uint8Array(0),
    });
  });

  it('3-4. Control Hello, RankExit, HelloAck, DeclareDead (SALT_B)', () => {
    for (const msg of [
      { type: 'Hello', host: 'exa', ranks: [0, 3, 4] },
      { type: 'RankExit', rank: 2 },
      { type: 'HelloAck' },
      { type: 'DeclareDead', rank: 4 },
    ] as const) {
      const rec: MuxRecord = { kind: 'Control', msg: structuredClone(msg) as never };
      expect(roundTrip(rec, macB)).toEqual(rec);
    }
  });

  it('5. HostFrame and Broadcast, with payloads and empty, no trailing bytes', () => {
    for (const rec of [
      { kind: 'HostFrame', payload: hexToBytes('f01d') },
      { kind: 'Broadcast', payload: hexToBytes('ca5f') },
      { kind: 'HostFrame', payload: new Uint8Array(0) },
      { kind: 'Broadcast', payload: new Uint8Array(0) },
    ] as MuxRecord[]) {
      expect(roundTrip(rec)).toEqual(rec);
    }
  });

  it('6, 10. a tampered payload fails the HMAC', () => {
    const b = encodeMuxRecord({ kind: 'HostFrame', payload: hexToBytes('0708090a') }, macA);
    b[b.length - 1] ^= 1;
    expect(() => decodeMuxRecord(b, macA)).toThrow(/HMAC verification failed/);
  });

  it('8. salt disagreement fails the HMAC', () => {
    const b = encodeMuxRecord({ kind: 'Data', rank: 1, payload: hexToBytes('01') }, macA);
    expect(codeOf(() => decodeMuxRecord(b, macB))).toBe('HMAC_MISMATCH');
  });

  it('9. the rank field is authenticated', () => {
    const b = encodeMuxRecord({ kind: 'Data', rank: 11, payload: hexToBytes('2a2a2a') }, macA);
    b[9] += 1;
    expect(codeOf(() => decodeMuxRecord(b, macA))).toBe('HMAC_MISMATCH');
  });

  it('11. a bad magic fails loudly and mentions the magic', () => {
    const b = encodeMuxRecord({ kind: 'Data', rank: 1, payload: hexToBytes('01') }, macA);
    b[0] ^= 0xff;
    expect(() => decodeMuxRecord(b, macA)).toThrow(/magic/);
    expect(codeOf(() => decodeMuxRecord(b, macA))).toBe('BAD_MAGIC');
  });

  it('a wrong version is BAD_VERSION, checked before the ceiling', () => {
    const b = encodeMuxRecord({ kind: 'Data', rank: 1, payload: hexToBytes('01') }, macA);
    writeU32LE(b, 4, 2);
    writeU32LE(b, 13, 0xffffffff);
    expect(codeOf(() => decodeMuxRecord(b, macA))).toBe('BAD_VERSION');
  });

  it('14, 22. opaque Data payloads are never parsed', () => {
    const rec: MuxRecord = { kind: 'Data', rank: 11, payload: hexToBytes('2a2a2a') };
    expect(roundTrip(rec)).toEqual(rec);
    const junk: MuxRecord = { kind: 'Data', rank: 3, payload: hexToBytes('ff00ff00abcdef') };
    expect(roundTrip(junk, macB)).toEqual(junk);
  });

  it('20. Data, Control and len-framed records are each one buffer (one write); Hello{"h",[0,1]} pinned', () => {
    const hello = encodeMuxRecord(
      { kind: 'Control', msg: { type: 'Hello', host: 'h', ranks: [0, 1] } },
      macA,
    );
    expect(bytesToHex(hello)).toBe(
      'd0170df101000000' + '02' + '00000000' + '06000000' + 'a5101cae9b111218' + '000168020001',
    );
    expect(encodeMuxRecord({ kind: 'Data', rank: 1, payload: hexToBytes('0909') }, macA)).toBeInstanceOf(
      Uint8Array,
    );
  });

  it('21. the split header+payload write yields the same bytes as one buffer', () => {
    for (const [kind, kindByte, payload] of [
      ['HostFrame', REC_HOST_FRAME, hexToBytes('070809')],
      ['Broadcast', REC_BROADCAST, hexToBytes('0405')],
    ] as const) {
      const whole = encodeMuxRecord({ kind, payload }, macA);
      const split = concatBytes(encodeMuxHeader(kindByte, 0, payload, macA), payload);
      expect(bytesToHex(split)).toBe(bytesToHex(whole));
    }
  });

  it('24. the ceiling is checked before the kind and the MAC (kind 0, len 0xFFFFFFFF, tag 0)', () => {
    const h = hexToBytes('d0170df1010000000000000000ffffffff0000000000000000');
    expect(() => decodeMuxRecord(h, macA)).toThrow(/frame ceiling/);
    expect(codeOf(() => parseMuxHeader(h))).toBe('OVER_CEILING');
  });

  it('a payload equal to the ceiling is allowed; one byte more is not', () => {
    const b = encodeMuxRecord({ kind: 'Broadcast', payload: new Uint8Array(10) }, macA);
    expect(decodeMuxRecord(b, macA, { ceiling: 10 }).kind).toBe('Broadcast');
    expect(codeOf(() => decodeMuxRecord(b, macA, { ceiling: 9 }))).toBe('OVER_CEILING');
  });

  it('an unknown kind is rejected only after the MAC verified', () => {
    const payload = hexToBytes('00');
    const good = concatBytes(encodeMuxHeader(9, 0, payload, macA), payload);
    expect(codeOf(() => decodeMuxRecord(good, macA))).toBe('UNKNOWN_KIND');
    const forged = good.slice();
    forged[8] = 9;
    forged[17] ^= 1;
    expect(codeOf(() => decodeMuxRecord(forged, macA))).toBe('HMAC_MISMATCH');
  });

  it('truncation and trailing bytes have their own codes', () => {
    const b = encodeMuxRecord({ kind: 'Data', rank: 1, payload: hexToBytes('0102') }, macA);
    expect(codeOf(() => decodeMuxRecord(b.subarray(0, b.length - 1), macA))).toBe('TRUNCATED');
    expect(codeOf(() => decodeMuxRecord(b.subarray(0, 20), macA))).toBe('TRUNCATED');
    expect(codeOf(() => decodeMuxRecord(concatBytes(b, hexToBytes('00')), macA))).toBe('TRAILING_BYTES');
  });

  it('a Control record whose bincode is bad is BAD_PAYLOAD (after the MAC)', () => {
    const payload = hexToBytes('09');
    const b = concatBytes(encodeMuxHeader(2, 0, payload, macA), payload);
    expect(codeOf(() => decodeMuxRecord(b, macA))).toBe('BAD_PAYLOAD');
  });
});
