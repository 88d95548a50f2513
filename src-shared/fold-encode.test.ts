// The fast bf16 re-encoding of the sums gives the codec's bits for every f32 bit pattern class.
import { describe, expect, it } from 'vitest';
import { f32BitsToBf16Bits } from './wire/tensor';
import { encodeBf16Sums } from './fold-encode';

describe('encodeBf16Sums', () => {
  it('matches f32BitsToBf16Bits on random bit patterns and the edge cases (ties, carries, infinities, NaNs, zeros)', () => {
    let x = 12345;
    const rnd = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0);
    const edges = [0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fbfffff, 0x00008000, 0x00018000, 0x3f808000, 0x3f818000, 0x7f7fffff, 0xff7fffff, 0x0000ffff, 0x7f7f8000];
    const bits = Uint32Array.from([...edges, ...Array.from({ length: 100_000 }, rnd)]);
    const sums = new Float32Array(bits.buffer);
    const got = encodeBf16Sums(sums);
    const want = new Uint8Array(bits.length * 2);
    bits.forEach((b, i) => {
      const h = f32BitsToBf16Bits(b);
      want[2 * i] = h & 0xff;
      want[2 * i + 1] = h >>> 8;
    });
    expect(Buffer.compare(got, want)).toBe(0);
    // A slice written at an element offset of a larger output, as the sliced result does.
    const out = new Uint8Array(bits.length * 2);
    encodeBf16Sums(sums, 0, 500, out, 0);
    encodeBf16Sums(sums, 500, bits.length, out, 500);
    expect(Buffer.compare(out, want)).toBe(0);
  });
});
