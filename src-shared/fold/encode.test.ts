// The fast bf16 re-encoding of the sums gives the codec's bits for every f32 bit pattern class.
import { describe, expect, it } from 'vitest';
import { f32BitsToBf16Bits } from '../wire/tensor';
import { encodeBf16Sums } from './encode';
import { getFoldKernel, setFoldKernel } from './kernel';

describe('encodeBf16Sums', () => {
  it('matches f32BitsToBf16Bits on random bit patterns and the edge cases (ties, carries, infinities, NaNs, zeros)', () => {
    let x = 12345;
    const rnd = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0);
    const edges = [
      0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fbfffff,
      0x00008000, 0x00018000, 0x3f808000, 0x3f818000, 0x7f7fffff, 0xff7fffff, 0x0000ffff, 0x7f7f8000,
    ];
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

describe('encodeBf16Sums through the kernel', () => {
  it('the SIMD encoder gives the codec bits for sums in kernel memory, at any slice and offset', async () => {
    const { bestFoldKernel } = await import('./kernel-wasm');
    const k = bestFoldKernel();
    expect(k.name).toBe('wasm-simd');
    const before = getFoldKernel();
    setFoldKernel(k);
    const n = 70_003; // kernel memory (>= 64 Ki elements) and a tail that is not a multiple of 8
    const sums = k.allocAccumulator!(n);
    const bits = new Uint32Array(sums.buffer, sums.byteOffset, n);
    let x = 777;
    const edges = [
      0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fbfffff,
      0x00008000, 0x00018000, 0x3f808000, 0x3f818000, 0x7f7fffff, 0xff7fffff,
    ];
    for (let i = 0; i < n; i++)
      bits[i] = i < edges.length ? edges[i] : (x = (Math.imul(x, 1664525) + 1013904223) >>> 0);
    const want = new Uint8Array(n * 2);
    bits.forEach((b, i) => {
      const h = f32BitsToBf16Bits(b);
      want[2 * i] = h & 0xff;
      want[2 * i + 1] = h >>> 8;
    });
    const out = new Uint8Array(n * 2);
    expect(k.encodeBf16Into!(sums, 0, n, out, 0)).toBe(n & ~7);
    expect(Buffer.compare(out.subarray(0, (n & ~7) * 2), want.subarray(0, (n & ~7) * 2))).toBe(0);
    const whole = encodeBf16Sums(sums);
    expect(Buffer.compare(whole, want)).toBe(0);
    const sliced = new Uint8Array(n * 2);
    for (const [a, b] of [
      [0, 13],
      [13, 40_001],
      [40_001, n],
    ])
      encodeBf16Sums(sums, a, b, sliced, a);
    expect(Buffer.compare(sliced, want)).toBe(0);
    k.releaseAccumulator!(sums);
    setFoldKernel(before);
  });
});
