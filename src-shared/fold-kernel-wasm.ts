// A WebAssembly SIMD fold kernel: f32x4 adds over 16-byte lanes, about 3x the
// plain JS loop. The module is 150-odd bytes, written out below opcode by
// opcode (no toolchain needed), compiled synchronously (small enough for any
// browser's main thread) and used from Node, Electron and the browser alike.
// Accumulator and payload blocks are staged through the module's memory in
// cache-sized blocks; tails of fewer than 4 elements go to the JS kernel.
// Where WebAssembly or SIMD is unavailable, bestFoldKernel() returns the JS one.
import { jsFoldKernel, type FoldKernel } from './fold-kernel';
import { LITTLE_ENDIAN_HOST } from './wire/tensor';

/* The module, in WebAssembly binary format:
 *   (memory (export "memory") 3)
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

function body(loadSrc: number[], srcStep: number): number[] {
  const code = [
    0x01, 0x01, I32, // one local: $end
    GET, 0, GET, 2, CONST, 2, 0x74 /* i32.shl */, ADD, SET, 3,
    0x02, 0x40, // block
    0x03, 0x40, // loop
    GET, 0, GET, 3, 0x4f /* i32.ge_u */, 0x0d, 1, // br_if 1 (exit)
    GET, 0, // store address
    GET, 0, ...V128_LOAD,
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

const f32Body = body(V128_LOAD, 16);
const bf16Body = body([...V128_LOAD16X4_U, CONST, 16, ...I32X4_SHL], 8);

export const FOLD_WASM_BYTES = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [0x01, 0x60, 0x03, I32, I32, I32, 0x00]), // type 0: (i32 i32 i32) -> ()
  ...section(3, [0x02, 0x00, 0x00]), // two functions of type 0
  ...section(5, [0x01, 0x00, 0x03]), // one memory, 3 pages (192 KiB)
  ...section(7, [0x03, ...name('memory'), 0x02, 0x00, ...name('add_f32'), 0x00, 0x00, ...name('add_bf16'), 0x00, 0x01]),
  ...section(10, [0x02, ...f32Body, ...bf16Body]),
]);

interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}

type AddFn = (acc: number, src: number, n: number) => void;

/** Elements per staged block (64 KiB of f32): small enough to stay in cache. */
const BLOCK = 4 * 1024;
const ACC_AT = 0;
const SRC_AT = 64 * 1024;

/** The SIMD kernel, or null where WebAssembly SIMD is unavailable (or the host is big-endian). */
export function createWasmFoldKernel(): FoldKernel | null {
  const wa = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (!wa || !LITTLE_ENDIAN_HOST) return null;
  let exports: Record<string, unknown>;
  try {
    if (!wa.validate(FOLD_WASM_BYTES)) return null;
    exports = new wa.Instance(new wa.Module(FOLD_WASM_BYTES), {}).exports;
  } catch {
    return null;
  }
  const memory = exports.memory as { buffer: ArrayBuffer };
  const addF32 = exports.add_f32 as AddFn;
  const addBf16 = exports.add_bf16 as AddFn;
  // The memory never grows, so these views stay valid.
  const memF32 = new Float32Array(memory.buffer);
  const memU8 = new Uint8Array(memory.buffer);

  const run = (acc: Float32Array, src: Uint8Array, accOffset: number, elemBytes: number, add: AddFn, tail: FoldKernel['addF32Into']) => {
    const n = Math.floor(src.length / elemBytes);
    for (let base = 0; base < n; base += BLOCK) {
      const m = Math.min(BLOCK, n - base);
      const m4 = m & ~3;
      const at = accOffset + base;
      if (m4 > 0) {
        memF32.set(acc.subarray(at, at + m4), ACC_AT / 4);
        memU8.set(src.subarray(base * elemBytes, (base + m4) * elemBytes), SRC_AT);
        add(ACC_AT, SRC_AT, m4);
        acc.set(memF32.subarray(ACC_AT / 4, ACC_AT / 4 + m4), at);
      }
      if (m4 < m) tail(acc, src.subarray((base + m4) * elemBytes, (base + m) * elemBytes), at + m4);
    }
  };

  return {
    name: 'wasm-simd',
    addF32Into: (acc, src, accOffset = 0) => run(acc, src, accOffset, 4, addF32, jsFoldKernel.addF32Into),
    addBf16Into: (acc, src, accOffset = 0) => run(acc, src, accOffset, 2, addBf16, jsFoldKernel.addBf16Into),
  };
}

let best: FoldKernel | null = null;

/** The fastest kernel this runtime supports (WebAssembly SIMD, else the JS loop). */
export function bestFoldKernel(): FoldKernel {
  best ??= createWasmFoldKernel() ?? jsFoldKernel;
  return best;
}
