// A WebAssembly SIMD fold kernel: f32x4 adds over 16-byte lanes, about 3x the
// plain JS loop. The module is 150-odd bytes, written out below opcode by
// opcode (no toolchain needed), compiled synchronously (small enough for any
// browser's main thread) and used from Node, Electron and the browser alike.
// The fold's accumulators are allocated in a module memory of their own, so
// only payload bytes are staged (one memcpy per cache-sized block) before the
// in-place SIMD add; an accumulator from elsewhere is staged block by block
// too. Tails of fewer than 4 elements go to the JS kernel.
// Where WebAssembly or SIMD is unavailable, bestFoldKernel() returns the JS one.
import { jsFoldKernel, type FoldKernel, type FoldMerger } from './kernel';
import { LITTLE_ENDIAN_HOST } from '../wire/tensor';
import { BF16_UNROLLED_MAX, FOLD_WASM_BYTES } from './kernel-wasm-module';
import { bf16BitsOfF32Bits } from './merge';
import { ReceiveArena } from './receive-arena';

export { FOLD_WASM_BYTES };

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
type SumFn = (dst: number, base: number, stride: number, k: number, n: number) => void;
type TableSumFn = (dst: number, table: number, k: number, n: number) => void;

interface Bound {
  addF32: AddFn;
  addF32FromZero: AddFn;
  addBf16: AddFn;
  encBf16: AddFn;
  sumF32: SumFn;
  sumBf16: SumFn;
  sumF32Table: TableSumFn;
  sumBf16Table: TableSumFn;
  /** sum_bf16_kK for K = 1..BF16_UNROLLED_MAX, at K - 1. */
  sumBf16Unrolled: AddFn[];
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
/** The receive arena's memory (receive-arena.ts): 2 GiB less a page, so every address is a positive i32. */
const ARENA_BYTES = 2 ** 31 - PAGE;
/** Bytes per arena block (as a staging block: the most a deposit holds beyond the bytes it received); a socket's reads into one block become one run. */
const ARENA_BLOCK = 1 << 20;
/** Sources the arena's merger has slots for (a relay's ranks; the controller's hosts or, direct, ranks). */
const ARENA_SLOTS = 64;

export interface WasmKernelOptions {
  /** Bytes of the receive arena (default ARENA_BYTES); tests use small ones. */
  arenaBytes?: number;
}

/** The SIMD kernel, or null where WebAssembly SIMD is unavailable (or the host is big-endian). */
export function createWasmFoldKernel(options: WasmKernelOptions = {}): FoldKernel | null {
  const wa = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (!wa || !LITTLE_ENDIAN_HOST) return null;
  let module: object;
  // The memory never grows, so views of it stay valid.
  const bind = (pages: number): Bound => bindMemory(new wa.Memory({ initial: pages, maximum: pages }));
  const bindMemory = (memory: WasmMemory): Bound => {
    const exports = new wa.Instance(module, { env: { memory } }).exports;
    return {
      addF32: exports.add_f32 as AddFn,
      addF32FromZero: exports.add_f32_z as AddFn,
      addBf16: exports.add_bf16 as AddFn,
      encBf16: exports.enc_bf16 as AddFn,
      sumF32: exports.sum_f32 as SumFn,
      sumBf16: exports.sum_bf16 as SumFn,
      sumF32Table: exports.sum_f32_t as TableSumFn,
      sumBf16Table: exports.sum_bf16_t as TableSumFn,
      sumBf16Unrolled: Array.from(
        { length: BF16_UNROLLED_MAX },
        (_, i) => exports[`sum_bf16_k${i + 1}`] as AddFn,
      ),
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

  // The merger's memory: the merge header (output block, address table, one slot per source; grown,
  // never shrunk, as k needs), or the receive arena's once it exists, where deposits are read in place.
  let merging: { bound: Bound; slots: number; merger: FoldMerger } | null = null;
  let arena: { arena: ReceiveArena; merger: FoldMerger } | null | undefined;
  const merger = (k: number): FoldMerger => {
    if (arena && k <= ARENA_SLOTS) return arena.merger;
    if (merging && merging.slots >= k) return merging.merger;
    const slots = Math.max(8, k);
    const bound = bind(Math.ceil(mergeHeaderBytes(slots) / PAGE));
    merging = { bound, slots, merger: wasmMerger(bound) };
    return merging.merger;
  };
  // Sums of at least half a block live in the arena once it exists, so the merge writes them in place
  // (no copy out of its output block); their runs of blocks by byte offset.
  const arenaRuns = new Map<number, number>();
  const arenaAccumulator = (n: number, uninitialized: boolean): Float32Array | null => {
    const a = arena?.arena;
    if (!a || n * 4 < a.blockBytes / 2) return null;
    const blocks = Math.ceil((n * 4) / a.blockBytes);
    const first = a.takeRun(blocks);
    if (first < 0) return null;
    const acc = new Float32Array(a.bytes.buffer, a.offsetOf(first), n);
    if (!uninitialized) acc.fill(0);
    arenaRuns.set(acc.byteOffset, blocks);
    return acc;
  };
  const releaseArenaAccumulator = (acc: Float32Array, a: ReceiveArena) => {
    const blocks = arenaRuns.get(acc.byteOffset);
    if (blocks === undefined) return;
    arenaRuns.delete(acc.byteOffset);
    const first = a.blockAt(acc.byteOffset);
    for (let b = first; b < first + blocks; b++) a.releaseBlock(b);
  };
  const receiveArena = (): ReceiveArena | null => {
    if (arena !== undefined) return arena?.arena ?? null;
    const bytes = options.arenaBytes ?? ARENA_BYTES;
    const first = Math.ceil(mergeHeaderBytes(ARENA_SLOTS) / PAGE) * PAGE;
    try {
      const pages = Math.ceil((first + Math.max(bytes - first, ARENA_BLOCK)) / PAGE);
      const bound = bindMemory(new wa.Memory({ initial: pages, maximum: pages }));
      arena = {
        arena: new ReceiveArena(bound.u8.buffer as ArrayBuffer, first, ARENA_BLOCK),
        merger: wasmMerger(bound),
      };
      // Sums in the arena are added into and encoded in place like any kernel accumulator's.
      owners.set(bound.u8.buffer, bound);
    } catch {
      arena = null; // memory refused: sockets read into ordinary buffers, the merge copies them
    }
    return arena?.arena ?? null;
  };

  return {
    name: 'wasm-simd',
    merger,
    receiveArena,
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
      const inArena = arenaAccumulator(n, uninitialized);
      if (inArena) return inArena;
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
      if (arena && acc.buffer === arena.arena.bytes.buffer) return releaseArenaAccumulator(acc, arena.arena);
      const b = owners.get(acc.buffer);
      if (!b || free.includes(b)) return;
      free.push(b);
      if (free.length > FREE_MAX) free.shift();
    },
  };
}
/** Bytes per merge slot (the output block is one slot too: f32 sums are as wide as f32 sources, bf16 bits as bf16). */
const MERGE_SLOT = 32 * 1024;
/**
 * The merge header: [output block][address table][slot 0][slot 1]... The
 * output block holds a step read wholly in place (8 slots' worth: fewer,
 * longer steps); a step with a copied source is a slot's worth at most.
 */
const OUT_AT = 0;
const OUT_BYTES = 8 * MERGE_SLOT;
const TABLE_AT = OUT_BYTES;
const TABLE_BYTES = 4096;
const slotAt = (j: number) => OUT_BYTES + TABLE_BYTES + MERGE_SLOT * j;
const mergeHeaderBytes = (slots: number) => slotAt(slots);
const bitsScratch = new Uint32Array(1);
const floatScratch = new Float32Array(bitsScratch.buffer);

/**
 * The SIMD merger over a memory that starts with a merge header. Source j of
 * a step is read where it lies when it is in this memory (readInPlace: the
 * receive arena) or from slot j (slot: copied there); the address table says
 * which. A step with every source in its slot uses the strided sums; tails
 * below a lane group are summed in JS from the same addresses.
 */
function wasmMerger(b: Bound): FoldMerger {
  const table = new Int32Array(b.u8.buffer, TABLE_AT, TABLE_BYTES / 4);
  const dv = new DataView(b.u8.buffer);
  const inSlots = (k: number) => {
    for (let j = 0; j < k; j++) if (table[j] !== slotAt(j)) return false;
    return true;
  };
  const slots: Uint8Array[] = [];
  return {
    slotBytes: MERGE_SLOT,
    slot: (j) => {
      table[j] = slotAt(j);
      return (slots[j] ??= b.u8.subarray(slotAt(j), slotAt(j + 1)));
    },
    memory: b.u8.buffer,
    inPlaceBytes: OUT_BYTES,
    readInPlace: (j, at) => {
      table[j] = at;
    },
    sumF32: (k, n, out, outAt) => {
      const n4 = n & ~3;
      if (n4 > 0) {
        // Sums in this memory are written where they belong; others go through the output block.
        const dst = out.buffer === b.u8.buffer ? out.byteOffset + outAt * 4 : OUT_AT;
        if (inSlots(k)) b.sumF32(dst, slotAt(0), MERGE_SLOT, k, n4);
        else b.sumF32Table(dst, TABLE_AT, k, n4);
        if (dst === OUT_AT) out.set(b.f32.subarray(OUT_AT / 4, OUT_AT / 4 + n4), outAt);
      }
      for (let i = n4; i < n; i++) {
        let s = 0;
        for (let j = 0; j < k; j++) s = Math.fround(s + dv.getFloat32(table[j] + 4 * i, true));
        out[outAt + i] = s;
      }
    },
    sumBf16: (k, n, out, outAt) => {
      const n8 = n & ~7;
      if (n8 > 0) {
        const dst = out.buffer === b.u8.buffer ? out.byteOffset + outAt * 2 : OUT_AT;
        if (k <= BF16_UNROLLED_MAX) b.sumBf16Unrolled[k - 1](dst, TABLE_AT, n8);
        else if (inSlots(k)) b.sumBf16(dst, slotAt(0), MERGE_SLOT, k, n8);
        else b.sumBf16Table(dst, TABLE_AT, k, n8);
        if (dst === OUT_AT) out.set(b.u8.subarray(OUT_AT, OUT_AT + n8 * 2), outAt * 2);
      }
      for (let i = n8; i < n; i++) {
        let s = 0;
        for (let j = 0; j < k; j++) {
          bitsScratch[0] = (dv.getUint16(table[j] + 2 * i, true) << 16) >>> 0;
          s = Math.fround(s + floatScratch[0]);
        }
        floatScratch[0] = s;
        const h = bf16BitsOfF32Bits(bitsScratch[0]);
        out[(outAt + i) * 2] = h & 0xff;
        out[(outAt + i) * 2 + 1] = h >>> 8;
      }
    },
  };
}

let best: FoldKernel | null = null;

/** The fastest kernel this runtime supports (WebAssembly SIMD, else the JS loop). */
export function bestFoldKernel(): FoldKernel {
  best ??= createWasmFoldKernel() ?? jsFoldKernel;
  return best;
}
