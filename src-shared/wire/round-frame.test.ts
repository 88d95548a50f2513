// RoundFrame layout, limits, bf16 and the 5.4 / 5.7 codec items.
import { describe, expect, it } from 'vitest';
import { bytesToHex, concatBytes, hexToBytes, writeU32LE } from './bytes';
import {
  DTYPE_BF16,
  DTYPE_F32,
  MAX_ROUND_FRAME_TENSORS,
  ROUND_KIND_CONTROL,
  ROUND_KIND_MODEL,
} from './constants';
import { nobleMac } from './mac';
import {
  bf16BitsToF32,
  decodeRoundFrame,
  elidedTensor,
  encodeRoundFrame,
  encodeRoundFrameChunks,
  f32BitsToBf16Bits,
  f32ToBf16Bits,
  roundFrameWireLen,
  roundToDtype,
  tensorFromValues,
  tensorValues,
  type RoundFrame,
} from './round-frame';
import { AGENT_SALT, ROGUE_SALT, TEST_SALT, codeOf } from './test-helpers';

const mac = nobleMac(AGENT_SALT);

const frame = (over: Partial<RoundFrame> = {}): RoundFrame => ({
  roundKind: ROUND_KIND_MODEL,
  weight: 3,
  tensors: [
    tensorFromValues(DTYPE_F32, [2, 3], [1, 2, 3, 4, 5, 6]),
    tensorFromValues(DTYPE_BF16, [4], [1, -2, 0.5, 256]),
  ],
  ...over,
});

describe('bf16 (5.4 item 16, 5.7)', () => {
  it('rounds to nearest even on the bit pattern', () => {
    expect(f32BitsToBf16Bits(0x3f808000)).toBe(0x3f80);
    expect(f32BitsToBf16Bits(0x3f808001)).toBe(0x3f81);
    expect(f32BitsToBf16Bits(0x3f818000)).toBe(0x3f82);
  });

  it('bf16 bit patterns survive bf16 -> f32 -> bf16', () => {
    for (const b of [0x0000, 0x0001, 0x3f80, 0x7f80, 0x8000, 0x4049])
      expect(f32ToBf16Bits(bf16BitsToF32(b))).toBe(b);
  });

  it('exact values stay exact', () => {
    for (const v of [0, 1, -2, 0.5, 256, -0.09375]) expect(bf16BitsToF32(f32ToBf16Bits(v))).toBe(v);
  });

  it('NaN stays a quiet NaN and never rounds to Inf', () => {
    for (const bits of [0x7fffffff, 0x7f800001, 0xffc00000, 0x7fbfffff]) {
      const h = f32BitsToBf16Bits(bits);
      expect(h & 0x0040).toBe(0x0040);
      expect(Number.isNaN(bf16BitsToF32(h))).toBe(true);
    }
    expect(f32BitsToBf16Bits(0x7f800000)).toBe(0x7f80);
    expect(f32BitsToBf16Bits(0x7f7fffff)).toBe(0x7f80);
  });

  it('roundToDtype matches the wire encoding', () => {
    expect(roundToDtype(DTYPE_BF16, 1.00390625)).toBe(1);
    expect(roundToDtype(DTYPE_F32, 0.1)).toBe(Math.fround(0.1));
  });
});

describe('RoundFrame layout', () => {
  it('18. wire length matches the serialized frame, both dtypes', () => {
    const f = frame();
    expect(encodeRoundFrame(f, mac).length).toBe(roundFrameWireLen(f));
    expect(roundFrameWireLen(f)).toBe(17 + (2 + 8 + 8 + 24) + (2 + 4 + 8 + 8) + 8);
  });

  it('21. an elided frame is 57 bytes and round-trips its schema', () => {
    const f: RoundFrame = {
      roundKind: ROUND_KIND_MODEL,
      weight: 0,
      tensors: [elidedTensor(DTYPE_F32, [64, 128]), elidedTensor(DTYPE_BF16, [512])],
    };
    const b = encodeRoundFrame(f, nobleMac(TEST_SALT));
    expect(b.length).toBe(57);
    const d = decodeRoundFrame(b, nobleMac(TEST_SALT));
    expect(d.tensors.map((t) => [t.dtype, t.dims, t.data])).toEqual([
      [0, [64, 128], null],
      [1, [512], null],
    ]);
    expect(Array.from(tensorValues(d.tensors[1]))).toEqual(new Array(512).fill(0));
  });

  it('decoded data are views of the input, and chunks concatenate to the frame', () => {
    const f = frame();
    const b = encodeRoundFrame(f, mac);
    const d = decodeRoundFrame(b, mac);
    expect(d.tensors[0].data!.buffer).toBe(b.buffer);
    expect(Array.from(tensorValues(d.tensors[1]))).toEqual([1, -2, 0.5, 256]);
    expect(bytesToHex(concatBytes(...encodeRoundFrameChunks(f, mac)))).toBe(bytesToHex(b));
    expect(d.tag).toEqual(b.subarray(b.length - 8));
  });

  it('a zero-element tensor is empty, not elided', () => {
    const f: RoundFrame = {
      roundKind: ROUND_KIND_CONTROL,
      weight: 0,
      tensors: [tensorFromValues(DTYPE_F32, [0, 4], [])],
    };
    expect(decodeRoundFrame(encodeRoundFrame(f, mac), mac).tensors[0].data).toEqual(new Uint8Array(0));
  });

  it('12. a frame keyed with another salt fails the footer HMAC', () => {
    const b = encodeRoundFrame(frame(), nobleMac(ROGUE_SALT));
    expect(() => decodeRoundFrame(b, mac)).toThrow(/HMAC verification failed/);
  });
});

describe('RoundFrame checks before the MAC', () => {
  const valid = () => encodeRoundFrame(frame(), mac);
  const breakTag = (b: Uint8Array) => {
    b[b.length - 1] ^= 0xff;
    return b;
  };

  it('tensor count above 65,536 is TOO_MANY_TENSORS', () => {
    const b = breakTag(valid());
    writeU32LE(b, 4, MAX_ROUND_FRAME_TENSORS + 1);
    expect(codeOf(() => decodeRoundFrame(b, mac))).toBe('TOO_MANY_TENSORS');
  });

  it('a round kind other than 0/1 is BAD_ROUND_KIND', () => {
    const b = breakTag(valid());
    b[8] = 2;
    expect(codeOf(() => decodeRoundFrame(b, mac))).toBe('BAD_ROUND_KIND');
  });

  it.each([NaN, Infinity, -1, -Infinity])('weight %d is BAD_WEIGHT', (w) => {
    const b = breakTag(valid());
    new DataView(b.buffer).setFloat64(9, w, true);
    expect(codeOf(() => decodeRoundFrame(b, mac))).toBe('BAD_WEIGHT');
  });

  it('cumulative nbytes above the ceiling is OVER_CEILING, before reading data', () => {
    const b = breakTag(valid());
    expect(codeOf(() => decodeRoundFrame(b, mac, { ceiling: 24 + 7 }))).toBe('OVER_CEILING');
    expect(codeOf(() => decodeRoundFrame(b.subarray(0, 17 + 42 + 14), mac, { ceiling: 24 + 7 }))).toBe(
      'OVER_CEILING',
    );
    expect(codeOf(() => decodeRoundFrame(b, mac, { ceiling: 24 + 8 }))).toBe('HMAC_MISMATCH');
  });

  it('a huge nbytes is rejected without allocating', () => {
    const f: RoundFrame = { roundKind: 0, weight: 1, tensors: [elidedTensor(DTYPE_F32, [4])] };
    const b = encodeRoundFrame(f, mac);
    new DataView(b.buffer).setBigUint64(17 + 2 + 4, 2n ** 63n, true);
    expect(codeOf(() => decodeRoundFrame(b, mac))).toBe('OVER_CEILING');
  });

  it('truncation and trailing bytes', () => {
    const b = valid();
    for (const cut of [0, 3, 10, 17, 30, b.length - 1])
      expect(codeOf(() => decodeRoundFrame(b.subarray(0, cut), mac))).toBe('TRUNCATED');
    expect(codeOf(() => decodeRoundFrame(concatBytes(b, hexToBytes('00')), mac))).toBe('TRAILING_BYTES');
  });

  it('the parser accepts any dtype; the payload codec rejects unknown ones (17)', () => {
    const f: RoundFrame = {
      roundKind: 0,
      weight: 1,
      tensors: [{ dtype: 9, dims: [2], data: new Uint8Array(8) }],
    };
    const d = decodeRoundFrame(encodeRoundFrame(f, mac), mac);
    expect(d.tensors[0].dtype).toBe(9);
    expect(() => tensorValues(d.tensors[0])).toThrow(/dtype tag 9/);
  });

  it('a full payload whose size is not numel x element size fails at decode time', () => {
    const f: RoundFrame = {
      roundKind: 0,
      weight: 1,
      tensors: [{ dtype: DTYPE_F32, dims: [3], data: new Uint8Array(8) }],
    };
    const d = decodeRoundFrame(encodeRoundFrame(f, mac), mac);
    expect(codeOf(() => tensorValues(d.tensors[0]))).toBe('BAD_PAYLOAD');
  });

  it('an elided tensor whose shape exceeds the ceiling cannot demand a huge zeros buffer', () => {
    expect(codeOf(() => tensorValues(elidedTensor(DTYPE_F32, [65536, 65536, 65536])))).toBe('OVER_CEILING');
  });

  it('the encoder refuses invalid kinds and weights', () => {
    expect(codeOf(() => encodeRoundFrame(frame({ roundKind: 5 }), mac))).toBe('BAD_ROUND_KIND');
    expect(codeOf(() => encodeRoundFrame(frame({ weight: -1 }), mac))).toBe('BAD_WEIGHT');
  });
});
