// Every fold kernel must agree with the plain definition on random data, at
// any alignment of the source bytes and any accumulator offset.
import { describe, expect, it } from 'vitest';

/** Element-wise identity of two arrays (faster than toEqual on large typed arrays). */
function expectSame(got: Float32Array, want: Float32Array): void {
  expect(got.length).toBe(want.length);
  for (let i = 0; i < got.length; i++) {
    if (!Object.is(got[i], want[i])) expect.fail(`element ${i}: ${got[i]} != ${want[i]}`);
  }
}
import { bf16BitsToF32 } from '../wire/tensor';
import { getFoldKernel, jsFoldKernel, setFoldKernel, type FoldKernel } from './kernel';
import { FOLD_WASM_BYTES, bestFoldKernel, createWasmFoldKernel } from './kernel-wasm';
import { chooseFoldKernel } from './index';

function checkKernel(k: FoldKernel): void {
  let seed = 99;
  const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  for (const n of [0, 1, 3, 4, 5, 17, 1000, 9_000]) {
    for (const misalign of [0, 1, 2, 3]) {
      const accOffset = n % 5;
      const vals = Float32Array.from({ length: n }, () => (rnd() - 0.5) * 1e3);
      const buf = new Uint8Array(n * 4 + misalign);
      buf.set(new Uint8Array(vals.buffer), misalign);
      const acc = Float32Array.from({ length: n + accOffset + 2 }, () => rnd());
      const want = Float32Array.from(acc);
      for (let i = 0; i < n; i++) want[accOffset + i] += vals[i];
      k.addF32Into(acc, buf.subarray(misalign), accOffset);
      expectSame(acc, want);

      const half = Uint16Array.from({ length: n }, () => Math.floor(rnd() * 0x10000) & 0x7f7f);
      const hb = new Uint8Array(n * 2 + misalign);
      hb.set(new Uint8Array(half.buffer), misalign);
      const acc2 = Float32Array.from({ length: n + accOffset }, () => rnd());
      const want2 = Float32Array.from(acc2);
      for (let i = 0; i < n; i++) want2[accOffset + i] += bf16BitsToF32(half[i]);
      k.addBf16Into(acc2, hb.subarray(misalign), accOffset);
      expectSame(acc2, want2);
    }
  }
}

/** (acc + 0) + src, the first add onto a verbatim seed, and -0 + -0 staying -0 otherwise. */
function checkFromZero(k: FoldKernel): void {
  const n = 9;
  const src = new Float32Array(n).fill(-0);
  src[8] = 1.5;
  const bytes = new Uint8Array(src.buffer);
  const plain = new Float32Array(n).fill(-0);
  k.addF32Into(plain, bytes);
  expect(Object.is(plain[0], -0)).toBe(true);
  const fromZero = new Float32Array(n).fill(-0);
  k.addF32Into(fromZero, bytes, 0, true);
  for (let i = 0; i < 8; i++) expect(Object.is(fromZero[i], 0)).toBe(true);
  expect(fromZero[8]).toBe(1.5);
}

describe('fold kernels', () => {
  it('fromZero adds compute (acc + 0) + src in both kernels', () => {
    checkFromZero(jsFoldKernel);
    checkFromZero(createWasmFoldKernel()!);
    const owned = createWasmFoldKernel()!.allocAccumulator!(70_000, true);
    owned.fill(-0);
    createWasmFoldKernel()!.addF32Into(owned, new Uint8Array(70_000 * 4), 0, false);
    expect(Object.is(owned[100], 0)).toBe(true); // -0 + (+0) = +0
  });

  it('the JS kernel matches the definition', () => checkKernel(jsFoldKernel));

  it('the WebAssembly SIMD module validates and its kernel agrees with the definition', () => {
    const wa = (globalThis as unknown as { WebAssembly: { validate(b: Uint8Array): boolean } }).WebAssembly;
    expect(wa.validate(FOLD_WASM_BYTES)).toBe(true);
    const wasm = createWasmFoldKernel();
    expect(wasm?.name).toBe('wasm-simd');
    checkKernel(wasm!);
  });

  it('both kernels give identical sums on random data, including the bf16 widening', () => {
    const wasm = createWasmFoldKernel()!;
    let seed = 5;
    const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const n = 100_003;
    const src = Uint8Array.from({ length: n * 4 + 3 }, () => Math.floor(rnd() * 256) & 0xbf);
    const a = new Float32Array(n);
    const b = new Float32Array(n);
    for (let r = 0; r < 3; r++) {
      jsFoldKernel.addF32Into(a, src.subarray(r, r + n * 4));
      wasm.addF32Into(b, src.subarray(r, r + n * 4));
      jsFoldKernel.addBf16Into(a, src.subarray(r, r + (n - 17) * 2), 17);
      wasm.addBf16Into(b, src.subarray(r, r + (n - 17) * 2), 17);
    }
    expectSame(b, a);
  });

  it('accumulators allocated in module memory take the in-place path and agree with the JS kernel', () => {
    const wasm = createWasmFoldKernel()!;
    const n = 70_001;
    const owned = wasm.allocAccumulator!(n);
    expect(owned.buffer).not.toBe(new Float32Array(1).buffer);
    expect(owned.every((x) => x === 0)).toBe(true);
    const plain = new Float32Array(n);
    let seed = 11;
    const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let r = 0; r < 4; r++) {
      const src = Uint8Array.from({ length: n * 4 + r }, () => Math.floor(rnd() * 256) & 0xbf).subarray(r);
      wasm.addF32Into(owned, src.subarray(0, (n - r) * 4), r);
      jsFoldKernel.addF32Into(plain, src.subarray(0, (n - r) * 4), r);
      wasm.addBf16Into(owned, src.subarray(0, n * 2));
      jsFoldKernel.addBf16Into(plain, src.subarray(0, n * 2));
    }
    expectSame(owned, plain);
    expect(() => wasm.addF32Into(owned, new Uint8Array(16), n - 2)).toThrow(RangeError);
    // Small accumulators stay plain arrays.
    expect(wasm.allocAccumulator!(10).length).toBe(10);
  });

  it('the kernel is chosen explicitly: importing the fold changes nothing, chooseFoldKernel installs the fastest', () => {
    expect(bestFoldKernel().name).toBe('wasm-simd');
    const before = getFoldKernel();
    expect(before.name).toBe('js');
    try {
      expect(chooseFoldKernel('best').name).toBe('wasm-simd');
      expect(getFoldKernel().name).toBe('wasm-simd');
      expect(chooseFoldKernel('js').name).toBe('js');
    } finally {
      setFoldKernel(before);
    }
  });
});
