// A WebAssembly SIMD fold kernel: f32x4 adds over 16-byte lanes, about 3x the
// plain JS loop. The module is 150-odd bytes, written out below opcode by
// opcode (no toolchain needed), compiled synchronously (small enough for any
// browser's main thread) and used from Node, Electron and the browser alike.
// The fold's accumulators are allocated in a module memory of their own, so
// only payload bytes are staged (one memcpy per cache-sized block) before the
// in-place SIMD add; an accumulator from elsewhere is staged block by block
// too. Tails of fewer than 4 elements go to the JS kernel.
// Where WebAssembly or SIMD is unavailable, bestFoldKernel() returns the JS one.
import { jsFoldKernel, type FoldKernel } from './kernel';
import { LITTLE_ENDIAN_HOST } from '../wire/tensor';

/* The module, in WebAssembly binary format:
 *   (import "env" "memory" (memory 1))
 *   (func (export "add_f32") (param $acc i32) (param $src i32) (param $n i32)   ;; n % 4 == 0
 *     (local $end i32)  end = acc + n*4
 *     loop: while acc < end: v128.store(acc, f32x4.add(v128.load(acc), v128.load(src))); acc += 16; src += 16
 *   (func (export "add_bf16") ... same, with src lanes = i32x4.shl(v128.load16x4_u(src), 16); src += 8
 */
const I32 = 0x7f;
const GET = 0x20;
const SET = 0x21;
const CONST = 0x41;
const ADD = 0x6a;
const SIMD = 0xfd;
const V128_LOAD = [SIMD, 0x00, 0x04, 0x00]; // align 16, offset 0
const V128_LOAD16X4_U = [SIMD, 0x04, 0x03, 0x00]; // align 8, offset 0
const V128_STORE = [SIMD, 0x0b, 0x04, 0x00];
const F32X4_ADD = [SIMD, 0xe4, 0x01];
const I32X4_SHL = [SIMD, 0xab, 0x01];

function body(loadSrc: number[], srcStep: number, accTransform: number[] = []): number[] {
  // prettier-ignore
  const code = [
    0x01, 0x01, I32, // one local: $end
    GET, 0, GET, 2, CONST, 2, 0x74 /* i32.shl */, ADD, SET, 3,
    0x02, 0x40, // block
    0x03, 0x40, // loop
    GET, 0, GET, 3, 0x4f /* i32.ge_u */, 0x0d, 1, // br_if 1 (exit)
    GET, 0, // store address
    GET, 0, ...V128_LOAD, ...accTransform,
    GET, 1, ...loadSrc,
    ...F32X4_ADD,
    ...V128_STORE,
    GET, 0, CONST, 16, ADD, SET, 0,
    GET, 1, CONST, srcStep, ADD, SET, 1,
    0x0c, 0, // br 0 (loop)
    0x0b, 0x0b, 0x0b, // end loop, end block, end func
  ];
  return [...leb(code.length), ...code];
}

/** Unsigned LEB128, the format of every size in a module. */
function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

function section(id: number, content: number[]): number[] {
  return [id, ...leb(content.length), ...content];
}

const name = (s: string) => [s.length, ...Array.from(s, (c) => c.charCodeAt(0))];

const V128_CONST_ZERO = [SIMD, 0x0c, ...new Array<number>(16).fill(0)];
/* (func (export "enc_bf16") (param $src i32) (param $dst i32) (param $n i32)   ;; n % 8 == 0
 *   bf16 bits of 8 f32 sums per step, as f32BitsToBf16Bits: for each lane v,
 *   NaN (v & 0x7fffffff > 0x7f800000) ? (v >> 16) | 0x40 : (v + 0x7fff + ((v >> 16) & 1)) >> 16,
 *   then the two i32x4 halves narrowed (unsigned) to one i16x8 and stored. */
const splat32 = (x: number) => [
  SIMD,
  0x0c,
  ...Array.from({ length: 16 }, (_, i) => (x >>> (8 * (i & 3))) & 0xff),
];
const I32X4_SHR_U = [SIMD, 0xad, 0x01];
const I32X4_ADD = [SIMD, 0xae, 0x01];
const I32X4_GT_U = [SIMD, 0x3c];
const V128_AND = [SIMD, 0x4e];
const V128_OR = [SIMD, 0x50];
const V128_BITSELECT = [SIMD, 0x52];
const I16X8_NARROW_I32X4_U = [SIMD, 0x86, 0x01];
const V = 4; // the v128 local
// prettier-ignore
const rneLanes = [
  SET, V,
  GET, V, CONST, 16, ...I32X4_SHR_U, ...splat32(0x40), ...V128_OR, // quiet NaN
  GET, V, ...splat32(0x7fff), ...I32X4_ADD, GET, V, CONST, 16, ...I32X4_SHR_U, ...splat32(1), ...V128_AND, ...I32X4_ADD, CONST, 16, ...I32X4_SHR_U, // RNE
  GET, V, ...splat32(0x7fffffff), ...V128_AND, ...splat32(0x7f800000), ...I32X4_GT_U, // is NaN
  ...V128_BITSELECT,
];
function encodeBody(): number[] {
  // prettier-ignore
  const code = [
    0x02, 0x01, I32, 0x01, 0x7b, // locals: $end i32, $v v128
    GET, 0, GET, 2, CONST, 2, 0x74 /* i32.shl */, ADD, SET, 3,
    0x02, 0x40, 0x03, 0x40, // block, loop
    GET, 0, GET, 3, 0x4f /* i32.ge_u */, 0x0d, 1,
    GET, 1, // store address
    GET, 0, SIMD, 0x00, 0x04, 0x00, ...rneLanes,
    GET, 0, SIMD, 0x00, 0x04, 0x10, ...rneLanes,
    ...I16X8_NARROW_I32X4_U,
    ...V128_STORE,
    GET, 0, CONST, 32, ADD, SET, 0,
    GET, 1, CONST, 16, ADD, SET, 1,
    0x0c, 0,
    0x0b, 0x0b, 0x0b,
  ];
  return [...leb(code.length), ...code];
}

const f32Body = body(V128_LOAD, 16);
/** (acc + 0) + src: the first add onto a verbatim seed (-0.0 becomes +0.0 as in flodl's promotion). */
const f32FromZeroBody = body(V128_LOAD, 16, [...V128_CONST_ZERO, ...F32X4_ADD]);
const bf16Body = body([...V128_LOAD16X4_U, CONST, 16, ...I32X4_SHL], 8);

// prettier-ignore
export const FOLD_WASM_BYTES = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [0x01, 0x60, 0x03, I32, I32, I32, 0x00]), // type 0: (i32 i32 i32) -> ()
  ...section(2, [0x01, ...name('env'), ...name('memory'), 0x02, 0x00, 0x01]), // import env.memory, at least 1 page
  ...section(3, [0x04, 0x00, 0x00, 0x00, 0x00]), // four functions of type 0
  ...section(7, [0x04, ...name('add_f32'), 0x00, 0x00, ...name('add_bf16'), 0x00, 0x01, ...name('add_f32_z'), 0x00, 0x02, ...name('enc_bf16'), 0x00, 0x03]),
  ...section(10, [0x04, ...f32Body, ...bf16Body, ...f32FromZeroBody, ...encodeBody()]),
]);

interface WasmMemory {
  readonly buffer: ArrayBuffer;
}

interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  Memory: new (desc: { initial: number; maximum?: number }) => WasmMemory;
}

type AddFn = (acc: number, src: number, n: number) => void;

interface Bound {
  addF32: AddFn;
  addF32FromZero: AddFn;
  addBf16: AddFn;
  encBf16: AddFn;
  u8: Uint8Array;
  f32: Float32Array;
}

const PAGE = 64 * 1024;
/** Elements per staged block (16 KiB of f32): small enough to stay in L1/L2. */
const BLOCK = 4 * 1024;
/** Staging area for payload bytes at the start of every memory. */
const STAGE_AT = 0;
const STAGE_BYTES = PAGE;
/** Accumulator below this many elements stay plain Float32Arrays (a memory per tensor costs 128 KiB). */
const MIN_WASM_ACCUMULATOR = 64 * 1024;

/** The SIMD kernel, or null where WebAssembly SIMD is unavailable (or the host is big-endian). */
export function createWasmFoldKernel(): FoldKernel | null {
  const wa = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (!wa || !LITTLE_ENDIAN_HOST) return null;
  let module: object;
  const bind = (pages: number): Bound => {
    // The memory never grows, so views of it stay valid.
    const memory = new wa.Memory({ initial: pages, maximum: pages });
    const exports = new wa.Instance(module, { env: { memory } }).exports;
    return {
      addF32: exports.add_f32 as AddFn,
      addF32FromZero: exports.add_f32_z as AddFn,
      addBf16: exports.add_bf16 as AddFn,
      encBf16: exports.enc_bf16 as AddFn,
      u8: new Uint8Array(memory.buffer),
      f32: new Float32Array(memory.buffer),
    };
  };
  let scratch: Bound;
  try {
    if (!wa.validate(FOLD_WASM_BYTES)) return null;
    module = new wa.Module(FOLD_WASM_BYTES);
    // Staging for payloads plus one block of a caller's accumulator.
    scratch = bind(2);
  } catch {
    return null;
  }
  /** Accumulators living in their own module memory, found by their buffer. */
  const owners = new WeakMap<ArrayBufferLike, Bound>();
  // Released memories are reused: a fresh one per tensor per round would be a
  // new model-sized allocation every round, freed only whenever the GC runs.
  const free: Bound[] = [];
  const FREE_MAX = 16;
  const ACC_AT = STAGE_BYTES;

  const run = (
    acc: Float32Array,
    src: Uint8Array,
    accOffset: number,
    elemBytes: number,
    pick: (b: Bound) => AddFn,
    tail: (acc: Float32Array, src: Uint8Array, accOffset: number) => void,
  ) => {
    const n = Math.floor(src.length / elemBytes);
    const own = owners.get(acc.buffer);
    for (let base = 0; base < n; base += BLOCK) {
      const m = Math.min(BLOCK, n - base);
      const m4 = m & ~3;
      const at = accOffset + base;
      if (m4 > 0) {
        if (own) {
          // The accumulator is in module memory: stage the payload only, add in place.
          if (at + m4 > acc.length) throw new RangeError('fold kernel: accumulator overrun');
          own.u8.set(src.subarray(base * elemBytes, (base + m4) * elemBytes), STAGE_AT);
          pick(own)(acc.byteOffset + at * 4, STAGE_AT, m4);
        } else {
          scratch.f32.set(acc.subarray(at, at + m4), ACC_AT / 4);
          scratch.u8.set(src.subarray(base * elemBytes, (base + m4) * elemBytes), STAGE_AT);
          pick(scratch)(ACC_AT, STAGE_AT, m4);
          acc.set(scratch.f32.subarray(ACC_AT / 4, ACC_AT / 4 + m4), at);
        }
      }
      if (m4 < m) tail(acc, src.subarray((base + m4) * elemBytes, (base + m) * elemBytes), at + m4);
    }
  };

  return {
    name: 'wasm-simd',
    addF32Into: (acc, src, accOffset = 0, fromZero = false) =>
      run(
        acc,
        src,
        accOffset,
        4,
        (b) => (fromZero ? b.addF32FromZero : b.addF32),
        (a, s, o) => jsFoldKernel.addF32Into(a, s, o, fromZero),
      ),
    addBf16Into: (acc, src, accOffset = 0) =>
      run(acc, src, accOffset, 2, (b) => b.addBf16, jsFoldKernel.addBf16Into),
    encodeBf16Into: (sums, from, to, out, at) => {
      // Sums in module memory only: each block is encoded into the staging area, then copied out.
      const own = owners.get(sums.buffer);
      if (!own) return 0;
      const n8 = (to - from) & ~7;
      for (let base = 0; base < n8; base += BLOCK) {
        const m = Math.min(BLOCK, n8 - base);
        own.encBf16(sums.byteOffset + (from + base) * 4, STAGE_AT, m);
        out.set(own.u8.subarray(STAGE_AT, STAGE_AT + m * 2), (at + base) * 2);
      }
      return n8;
    },
    allocAccumulator: (n, uninitialized = false) => {
      if (n < MIN_WASM_ACCUMULATOR) return new Float32Array(n);
      const need = STAGE_BYTES + n * 4;
      // Reuse the smallest released memory that fits without wasting more than
      // half of it (best fit: a round asks for sums, seeds and outputs of
      // different sizes, and first fit would hand the sums' memory to a seed
      // and leave the sums to a fresh, page-faulting one).
      let i = -1;
      free.forEach((b, k) => {
        if (b.u8.length >= need && b.u8.length <= 2 * need && (i < 0 || b.u8.length < free[i].u8.length))
          i = k;
      });
      let b: Bound;
      if (i >= 0) {
        b = free.splice(i, 1)[0];
        if (!uninitialized) b.f32.fill(0, STAGE_BYTES / 4, STAGE_BYTES / 4 + n);
      } else {
        try {
          b = bind(Math.ceil(need / PAGE));
        } catch {
          return new Float32Array(n); // memory refused (too large): the staged path still works
        }
      }
      const acc = new Float32Array(b.u8.buffer, STAGE_BYTES, n);
      owners.set(acc.buffer, b);
      return acc;
    },
    releaseAccumulator: (acc) => {
      const b = owners.get(acc.buffer);
      if (!b || free.includes(b)) return;
      free.push(b);
      if (free.length > FREE_MAX) free.shift();
    },
  };
}
let best: FoldKernel | null = null;

/** The fastest kernel this runtime supports (WebAssembly SIMD, else the JS loop). */
export function bestFoldKernel(): FoldKernel {
  best ??= createWasmFoldKernel() ?? jsFoldKernel;
  return best;
}
