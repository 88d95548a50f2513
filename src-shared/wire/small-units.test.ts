// Handshakes, channel magics, len-framed blobs, salt text and constants.
import { describe, expect, it } from 'vitest';
import { bytesToHex, hexToBytes } from './bytes';
import { channelOfMagic, encodeChannelMagic, expectChannelMagic } from './channel';
import { DEFAULT_FRAME_CEILING, FRAME_CEILING_FLOOR, deriveFrameCeiling } from './constants';
import { FrameCeiling } from './frame-ceiling';
import {
  decodeControlAck,
  decodeControlHandshake,
  decodeDataAck,
  decodeDataHandshake,
  encodeControlAck,
  encodeControlHandshake,
  encodeDataAck,
  encodeDataHandshake,
  decodeControlHandshakeV4,
  encodeControlHandshakeV4,
  expectMagicPrefix,
} from './handshake';
import { FixedReader } from './fixed-reader';
import { decodeLenFrame, encodeLenFrame, encodeLenPrefix } from './len-frame';
import { nobleMac } from './mac';
import { randomSaltHex, saltFromHex, saltToHex } from './salt';
import { AGENT_SALT, SAMPLE_SALT, codeOf } from './test-helpers';

describe('handshakes (3.6)', () => {
  const mac = nobleMac(AGENT_SALT);
  it('data handshake and ack, v2 and v3', () => {
    expect(bytesToHex(encodeDataHandshake({ version: 3, rank: 0, worldSize: 1 }))).toBe(
      'c0170df1030000000000000001000000',
    );
    expect(bytesToHex(encodeDataHandshake({ version: 2, rank: 0, worldSize: 1 }))).toBe(
      'c0170df1020000000000000001000000',
    );
    expect(bytesToHex(encodeDataAck(3))).toBe('c1170df103000000');
    expect(decodeDataHandshake(hexToBytes('c0170df1030000000500000008000000'), { version: 3 })).toEqual({
      version: 3,
      rank: 5,
      worldSize: 8,
    });
    expect(
      codeOf(() => decodeDataHandshake(hexToBytes('c0170df1020000000000000001000000'), { version: 3 })),
    ).toBe('BAD_VERSION');
    expect(codeOf(() => decodeDataAck(hexToBytes('c0170df103000000')))).toBe('BAD_MAGIC');
  });

  it('control handshake and ack (pre-v4, agent salt, rank 1 of 2)', () => {
    expect(bytesToHex(encodeControlHandshake({ version: 2, rank: 1, worldSize: 2 }, mac))).toBe(
      'c2170df10200000001000000020000008529fcde6a7fdbd7',
    );
    expect(bytesToHex(encodeControlHandshake({ version: 3, rank: 1, worldSize: 2 }, mac))).toBe(
      'c2170df10300000001000000020000' + '00b9e05e52fc1b7b8d',
    );
    expect(bytesToHex(encodeControlAck(2, mac))).toBe('c3170df10200000014e1dbaf93d842d5');
    expect(bytesToHex(encodeControlAck(3, mac))).toBe('c3170df103000000e96a53d1e00a528b');
    expect(decodeControlAck(encodeControlAck(3, mac), mac, { version: 3 }).version).toBe(3);
  });

  it('5.6 item 2: a wrong salt is rejected with HMAC verification failed', () => {
    const b = encodeControlHandshake({ version: 2, rank: 1, worldSize: 2 }, mac);
    expect(() => decodeControlHandshake(b, nobleMac(SAMPLE_SALT))).toThrow(/HMAC verification failed/);
    expect(decodeControlHandshake(b, mac)).toMatchObject({ version: 2, rank: 1, worldSize: 2 });
  });

  it('v4+ control handshake: 56 bytes, model signature at 16..48, MAC over 0..48 (5.2 item 17)', () => {
    const sig = new Uint8Array(32).fill(0xcd);
    const b = encodeControlHandshakeV4({ version: 4, rank: 1, worldSize: 2, modelSig: sig }, mac);
    expect(b.length).toBe(56);
    expect(bytesToHex(b.subarray(0, 16))).toBe('c2170df104000000' + '01000000' + '02000000');
    expect(bytesToHex(b.subarray(48))).toBe(bytesToHex(mac.tag(b.subarray(0, 48))));
    expect(decodeControlHandshakeV4(b, mac, { version: 4 })).toMatchObject({
      rank: 1,
      worldSize: 2,
      modelSig: sig,
    });
    b[20] ^= 1;
    expect(codeOf(() => decodeControlHandshakeV4(b, mac))).toBe('HMAC_MISMATCH');
  });

  it('a FixedReader with a magic check rejects a wrong magic after 4 bytes', () => {
    const r = new FixedReader(16, { check: expectMagicPrefix(0xf10d17c0, 'data handshake') });
    expect(r.push(hexToBytes('c017')).unit).toBeNull();
    expect(codeOf(() => r.push(hexToBytes('0df2')))).toBe('BAD_MAGIC');
  });

  it('wrong lengths', () => {
    expect(codeOf(() => decodeDataHandshake(hexToBytes('c0170df103000000')))).toBe('TRUNCATED');
    expect(codeOf(() => decodeDataAck(hexToBytes('c1170df10300000000')))).toBe('TRAILING_BYTES');
  });
});

describe('channel magics (3.1)', () => {
  it('wire bytes and routing', () => {
    expect(bytesToHex(encodeChannelMagic('rendezvous'))).toBe('e0170df1');
    expect(bytesToHex(encodeChannelMagic('data'))).toBe('e1170df1');
    expect(bytesToHex(encodeChannelMagic('control'))).toBe('e2170df1');
    expect(bytesToHex(encodeChannelMagic('join'))).toBe('e3170df1');
    expect(channelOfMagic(hexToBytes('e1170df1'))).toBe('data');
    expect(channelOfMagic(hexToBytes('e2170df1'))).toBe('control');
    expect(channelOfMagic(hexToBytes('47455420'))).toBe('http');
    expect(channelOfMagic(hexToBytes('504f5354'))).toBe('http');
    expect(channelOfMagic(hexToBytes('d0170df1'))).toBeNull();
    expect(channelOfMagic(hexToBytes('e117'))).toBeNull();
    expect(() => expectChannelMagic(hexToBytes('e2170df1'), 'data')).toThrow(/data magic/);
  });
});

describe('len-framed blobs (3.7, 5.1 items 15-16, 23)', () => {
  it('15-16. 5-byte blob -> 9 bytes; empty blob -> 4 bytes', () => {
    expect(bytesToHex(encodeLenFrame(hexToBytes('1020304050')))).toBe('050000001020304050');
    expect(encodeLenFrame(hexToBytes('1020304050')).length).toBe(9);
    expect(bytesToHex(encodeLenFrame(new Uint8Array(0)))).toBe('00000000');
    expect(bytesToHex(decodeLenFrame(hexToBytes('050000001020304050')))).toBe('1020304050');
    expect(decodeLenFrame(hexToBytes('00000000')).length).toBe(0);
  });

  it('23. an oversized prefix is rejected and mentions the frame ceiling', () => {
    const b = hexToBytes('ffffffff' + '00'.repeat(16));
    expect(() => decodeLenFrame(b)).toThrow(/frame ceiling/);
    expect(codeOf(() => decodeLenFrame(b))).toBe('OVER_CEILING');
    expect(codeOf(() => encodeLenPrefix(11, 10))).toBe('OVER_CEILING');
    expect(bytesToHex(encodeLenPrefix(10, 10))).toBe('0a000000');
  });
});

describe('salt text (5.3 items 19-22)', () => {
  it('20. hex round-trips as 32 lowercase chars, whitespace trimmed', () => {
    expect(saltToHex(saltFromHex(' 112233445566778899AABBCCDDEEFF00\n'))).toBe(
      '112233445566778899aabbccddeeff00',
    );
  });
  it('21-22. wrong length and bad chars', () => {
    expect(() => saltFromHex('deadbeef')).toThrow(/hex must be 32 chars/);
    expect(() => saltFromHex('z'.repeat(32))).toThrow(/hex-decode/);
  });
  it('19. random salts differ and are never all-zero', () => {
    const csprng = (k: number) => crypto.getRandomValues(new Uint8Array(k));
    const seen = new Set(Array.from({ length: 64 }, () => randomSaltHex(csprng)));
    expect(seen.size).toBe(64);
    for (const s of seen) {
      expect(s).toMatch(/^[0-9a-f]{32}$/);
      expect(s).not.toBe('0'.repeat(32));
    }
  });
});

describe('frame ceiling (5.3 items 27-28)', () => {
  it('derive_frame_ceiling: floor and margin', () => {
    expect(deriveFrameCeiling(0)).toBe(FRAME_CEILING_FLOOR);
    expect(deriveFrameCeiling(1_000_000)).toBe(64 * 1024 * 1024);
    expect(deriveFrameCeiling(100 * 1024 * 1024)).toBe(200 * 1024 * 1024);
    expect(deriveFrameCeiling(Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
    expect(DEFAULT_FRAME_CEILING).toBe(1024 ** 3);
  });

  it('28. defaults to 1 GiB when unset; 0 is ignored; the first install wins', () => {
    const c = new FrameCeiling();
    expect(c.value).toBe(1024 ** 3);
    expect(c.install(0)).toBe(false);
    expect(c.isSet).toBe(false);
    expect(c.installForModel(100 * 1024 * 1024)).toBe(true);
    expect(c.install(5)).toBe(false);
    expect(c.value).toBe(200 * 1024 * 1024);
  });
});
