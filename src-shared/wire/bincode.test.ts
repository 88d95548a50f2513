import { describe, expect, it } from 'vitest';
import { BincodeReader, BincodeWriter } from './bincode';
import { bytesToHex, hexToBytes } from './bytes';
import { WireError } from './errors';

const enc = (f: (w: BincodeWriter) => void) => {
  const w = new BincodeWriter();
  f(w);
  return bytesToHex(w.finish());
};

describe('bincode standard() varints', () => {
  it.each([
    [0, '00'],
    [250, 'fa'],
    [251, 'fbfb00'],
    [256, 'fb0001'],
    [300, 'fb2c01'],
    [65535, 'fbffff'],
    [65536, 'fc00000100'],
    [70000, 'fc70110100'],
    [0xffffffff, 'fcffffffff'],
    [2 ** 32, 'fd0000000001000000'],
  ])('%d -> %s and back', (n, hex) => {
    expect(enc((w) => w.varint(n))).toBe(hex);
    const r = new BincodeReader(hexToBytes(hex));
    expect(r.varintU64()).toBe(n);
    expect(r.remaining).toBe(0);
  });

  it('u64::MAX as bigint', () => {
    const hex = enc((w) => w.varint(2n ** 64n - 1n));
    expect(hex).toBe('fdffffffffffffffff');
    expect(new BincodeReader(hexToBytes(hex)).varintBig()).toBe(2n ** 64n - 1n);
  });

  it('rejects the u128 and reserved markers and out-of-range u32', () => {
    expect(() => new BincodeReader(hexToBytes('fe')).varintBig()).toThrow(WireError);
    expect(() => new BincodeReader(hexToBytes('ff')).varintBig()).toThrow(/marker/);
    expect(() => new BincodeReader(hexToBytes('fd0000000001000000')).varint()).toThrow(
      /InvalidIntegerType \{ expected: U32, found: U64 \}/,
    );
    expect(() => new BincodeReader(hexToBytes('fb01')).varint()).toThrow(/unexpected end/);
  });

  it('zigzag signed ints', () => {
    for (const [v, hex] of [
      [0, '00'],
      [-1, '01'],
      [1, '02'],
      [-2, '03'],
      [-200, 'fb8f01'],
    ] as const) {
      expect(enc((w) => w.svarint(v))).toBe(hex);
      expect(new BincodeReader(hexToBytes(hex)).svarint()).toBe(v);
    }
    expect(new BincodeReader(hexToBytes(enc((w) => w.svarint(-70000)))).svarint()).toBe(-70000);
  });
});

describe('bincode values', () => {
  it('string, vec, option, bool, u8, f32, f64', () => {
    const hex = enc((w) =>
      w
        .string('exa')
        .vec([0, 3, 4], (w, x) => w.varint(x))
        .option(null, (w, x: number) => w.f64(x))
        .option(1.5, (w, x) => w.f64(x))
        .bool(true)
        .u8(200)
        .f32(2.5),
    );
    expect(hex).toBe('0365786103000304' + '00' + '01' + '000000000000f83f' + '01' + 'c8' + '00002040');
    const r = new BincodeReader(hexToBytes(hex));
    expect(r.string()).toBe('exa');
    expect(r.vec((r) => r.varint())).toEqual([0, 3, 4]);
    expect(r.option((r) => r.f64())).toBeNull();
    expect(r.option((r) => r.f64())).toBe(1.5);
    expect(r.bool()).toBe(true);
    expect(r.u8()).toBe(200);
    expect(r.f32()).toBe(2.5);
    expect(r.remaining).toBe(0);
  });

  it('UTF-8 strings round-trip and invalid UTF-8 is rejected', () => {
    const s = 'höst-日本-🦀';
    const r = new BincodeReader(new BincodeWriter().string(s).finish());
    expect(r.string()).toBe(s);
    expect(() => new BincodeReader(hexToBytes('02c328')).string()).toThrow(/UTF-8/);
    expect(() => new BincodeReader(hexToBytes('02c0af')).string()).toThrow(/UTF-8/);
  });

  it('a hostile length fails where bincode fails (end of input), never allocating by the length', () => {
    expect(() => new BincodeReader(hexToBytes('fdffffffffffff0000')).string()).toThrow(WireError);
    // Vec length 2^32-1 with one element byte: the first element reads, the second finds the end.
    expect(() => new BincodeReader(hexToBytes('fcffffffff00')).vec((r) => r.u8())).toThrow(
      /UnexpectedEnd \{ additional: 1 \}/,
    );
  });

  it('rejects bad bool and Option tags', () => {
    expect(() => new BincodeReader(hexToBytes('02')).bool()).toThrow(/bool/);
    expect(() => new BincodeReader(hexToBytes('02')).option((r) => r.u8())).toThrow(/Option/);
  });
});
