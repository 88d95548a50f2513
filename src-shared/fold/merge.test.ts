// The merge's k-way sums (merge.ts, kernel-wasm.ts's SIMD merger) against the
// definition: ((+0 + s0) + s1) + ... with one f32 rounding per add, stored as
// f32 or as flodl's bf16 bits; and the gather over staged segments of any
// length and alignment (by copy and by reference).
import { describe, expect, it } from 'vitest';
import { DTYPE_BF16, DTYPE_F32 } from '../wire/constants';
import { bf16BitsToF32 } from '../wire/tensor';
import { jsFoldKernel, setFoldKernel, getFoldKernel, type FoldKernel } from './kernel';
import { createWasmFoldKernel } from './kernel-wasm';
import { bf16BitsOfF32Bits, mergeSources, mergerFor } from './merge';
import { DepositStaging, setMinReferencedBytes } from './staging';

let seed = 7;
const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
/** f32 values with the awkward ones mixed in: signed zeros, subnormals, huge magnitudes that overflow in a sum. */
function awkward(n: number): Float32Array {
  const specials = [0, -0, 1e-45, -1e-45, 1.1754942e-38, 3.4e38, -3.4e38, 1, -1, 0.1];
  return Float32Array.from({ length: n }, () =>
    rnd() < 0.2
      ? specials[Math.floor(rnd() * specials.length)]
      : (rnd() - 0.5) * 2 ** Math.floor(rnd() * 40 - 20),
  );
}

function f32Sums(srcs: Float32Array[], n: number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (const x of srcs) s = Math.fround(s + x[i]);
    out[i] = s;
  }
  return out;
}

const bitsOf = (x: number) => new Uint32Array(Float32Array.of(x).buffer)[0];

function withKernel<T>(k: FoldKernel, f: () => T): T {
  const was = getFoldKernel();
  setFoldKernel(k);
  try {
    return f();
  } finally {
    setFoldKernel(was);
  }
}

function sameF32(got: Float32Array, want: Float32Array): void {
  for (let i = 0; i < want.length; i++)
    if (!Object.is(got[i], want[i])) expect.fail(`element ${i}: ${got[i]} != ${want[i]}`);
}

const KERNELS = [jsFoldKernel, createWasmFoldKernel()!];

describe('the merge (k-way sums from +0.0, in order)', () => {
  it.each(KERNELS.map((k) => [k.name, k] as const))(
    '%s: f32 and bf16 sums match the definition for k = 1..20 and every tail',
    (_name, kernel) => {
      withKernel(kernel, () => {
        for (const k of [1, 2, 3, 4, 5, 6, 7, 8, 9, 20]) {
          for (const n of [1, 3, 4, 7, 8, 9, 17, 4095, 4097]) {
            const m = mergerFor(k);
            const c = Math.min(n, m.slotBytes / 4);
            const srcs = Array.from({ length: k }, () => awkward(c));
            srcs.forEach((s, j) => m.slot(j).set(new Uint8Array(s.buffer)));
            const out = new Float32Array(c + 3).fill(7);
            m.sumF32(k, c, out, 2);
            sameF32(out.subarray(2, 2 + c), f32Sums(srcs, c));
            expect(out[1]).toBe(7);
            expect(out[2 + c]).toBe(7);

            const halves = Array.from({ length: k }, () =>
              Uint16Array.from({ length: c }, () => Math.floor(rnd() * 0x10000) & 0xbfff),
            );
            halves.forEach((h, j) => m.slot(j).set(new Uint8Array(h.buffer)));
            const bytes = new Uint8Array((c + 2) * 2).fill(0xee);
            m.sumBf16(k, c, bytes, 1);
            const want = f32Sums(
              halves.map((h) => Float32Array.from(h, (b) => bf16BitsToF32(b))),
              c,
            );
            for (let i = 0; i < c; i++) {
              const got = bytes[2 + 2 * i] | (bytes[3 + 2 * i] << 8);
              if (got !== bf16BitsOfF32Bits(bitsOf(want[i])))
                expect.fail(`k ${k} n ${c} element ${i}: ${got} != ${bf16BitsOfF32Bits(bitsOf(want[i]))}`);
            }
            expect(bytes[0]).toBe(0xee);
            expect(bytes[2 + 2 * c]).toBe(0xee);
          }
        }
      });
    },
  );

  it('a -0.0 summand alone sums to +0.0 (promotion from +0.0) in both kernels', () => {
    for (const kernel of KERNELS)
      withKernel(kernel, () => {
        const m = mergerFor(1);
        m.slot(0).set(new Uint8Array(new Float32Array(8).fill(-0).buffer));
        const out = new Float32Array(8).fill(-0);
        m.sumF32(1, 8, out, 0);
        expect(Array.from(out, (x) => Object.is(x, 0))).toEqual(new Array(8).fill(true));
      });
  });

  it('gathers staged segments of any length and alignment, by copy and by reference, yielding as asked', () => {
    const was = setMinReferencedBytes(5);
    try {
      for (const kernel of KERNELS)
        for (const byReference of [false, true])
          for (const dtype of [DTYPE_F32, DTYPE_BF16]) {
            const n = 10_001;
            const size = dtype === DTYPE_F32 ? 4 : 2;
            const k = 3;
            const payloads = Array.from({ length: k }, () => {
              const v = awkward(n);
              if (dtype === DTYPE_F32) return new Uint8Array(v.buffer);
              return new Uint8Array(Uint16Array.from(v, (x) => bf16BitsOfF32Bits(bitsOf(x)) & 0xbfff).buffer);
            });
            // Each deposit: 3 bytes of an earlier tensor, then the payload in chunks of 1 to 9000 bytes.
            const sources = payloads.map((p) => {
              const st = new DepositStaging(byReference);
              st.append(Uint8Array.of(1, 2, 3));
              const start = st.alignTensor();
              for (let o = 0; o < p.length;) {
                const len = 1 + Math.floor(rnd() * 9000);
                st.append(p.subarray(o, o + len));
                o += len;
              }
              expect(st.size).toBe(3 + n * size);
              return { staging: st, start };
            });
            const out = dtype === DTYPE_F32 ? new Float32Array(n) : new Uint8Array(n * 2);
            const slice = { elems: 8192, work: 0 };
            let yields = 0;
            withKernel(kernel, () => {
              for (const _ of mergeSources(sources, n, dtype, out, slice)) yields++;
            });
            expect(yields).toBeGreaterThan(0);
            const want = f32Sums(
              payloads.map((p) =>
                dtype === DTYPE_F32
                  ? new Float32Array(p.buffer)
                  : Float32Array.from(new Uint16Array(p.buffer), (b) => bf16BitsToF32(b)),
              ),
              n,
            );
            if (dtype === DTYPE_F32) sameF32(out as Float32Array, want);
            else
              expect(Array.from(new Uint16Array((out as Uint8Array).buffer))).toEqual(
                Array.from(want, (x) => bf16BitsOfF32Bits(bitsOf(x))),
              );
            for (const s of sources) s.staging.release();
          }
    } finally {
      setMinReferencedBytes(was);
    }
  });

  it('a by-reference staging keeps large pieces as views and copies small ones', () => {
    const was = setMinReferencedBytes(4096);
    try {
      const big = new Uint8Array(10_000).fill(5);
      const st = new DepositStaging(true);
      st.append(Uint8Array.of(9, 9));
      st.append(big);
      // The big piece is the producer's memory: a view of it comes back, no copy.
      expect(st.cursor(2).view(10_000)!.buffer).toBe(big.buffer);
      expect(st.cursor(0).view(2)!.buffer).not.toBe(big.buffer);
      const all = new Uint8Array(10_002);
      st.cursor(0).read(all, 0, 10_002);
      expect(Array.from(all.subarray(0, 3))).toEqual([9, 9, 5]);
      expect(() => st.cursor(0).read(new Uint8Array(10_003), 0, 10_003)).toThrow(RangeError);
      st.release();
      expect(st.size).toBe(0);
    } finally {
      setMinReferencedBytes(was);
    }
  });
});
