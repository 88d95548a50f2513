// The fold's hot path: acc[i] += element i of a tensor payload (LE bytes),
// in place, with no per-element allocation. Payload chunks arrive at any byte
// offset (tensor data starts at odd frame offsets), so unaligned input is
// staged through a small aligned buffer with one memcpy per block. The
// kernel is swappable and chosen explicitly at start-up (chooseFoldKernel in
// ./index.ts, kernel-wasm.ts builds the WebAssembly SIMD one); until then the
// portable JS kernel runs, so importing the fold never changes global state.
import { LITTLE_ENDIAN_HOST } from '../wire/tensor';
import type { ReceiveArena } from './receive-arena';

/**
 * The merge's k-way sums (merge.ts): k sources' next blocks of elements are
 * copied into the slots, then summed from +0.0 in slot order with one f32
 * rounding per add, as flodl's promotion and commit-order adds do.
 */
export interface FoldMerger {
  /** Bytes per slot: a block is this many bytes of every source (slotBytes / element size elements). */
  readonly slotBytes: number;
  /** Source j's slot (LE element bytes): this step reads source j from there. */
  slot(j: number): Uint8Array;
  /** Optional: the memory whose bytes the merger reads in place (the receive arena's, receive-arena.ts). */
  readonly memory?: ArrayBufferLike;
  /** With `memory`: source bytes per step when every source is read in place (at most the output block). */
  readonly inPlaceBytes?: number;
  /** With `memory`: this step reads source j in place at byte `at` of `memory` (LE elements, any alignment). */
  readInPlace?(j: number, at: number): void;
  /** out[outAt + i] = ((+0 + slot0[i]) + slot1[i]) + ... for i < n, f32 sources. */
  sumF32(k: number, n: number, out: Float32Array, outAt: number): void;
  /** The bf16 bits (LE, RNE as f32BitsToBf16Bits) of the same sums of bf16 sources, into out at element outAt. */
  sumBf16(k: number, n: number, out: Uint8Array, outAt: number): void;
}

export interface FoldKernel {
  readonly name: string;
  /**
   * acc[accOffset + i] += f32 element i of `src` (LE bytes, length a multiple of 4).
   * `fromZero` computes (acc + 0) + src instead: the first add onto a verbatim
   * seed, so a -0.0 seed element sums as flodl's promotion from +0.0 does.
   */
  addF32Into(acc: Float32Array, src: Uint8Array, accOffset?: number, fromZero?: boolean): void;
  /** acc[accOffset + i] += bf16 element i of `src` widened exactly (LE bytes, length a multiple of 2). */
  addBf16Into(acc: Float32Array, src: Uint8Array, accOffset?: number): void;
  /** Optional: an accumulator of n elements that this kernel adds into fastest (zeroed unless `uninitialized`). */
  allocAccumulator?(n: number, uninitialized?: boolean): Float32Array;
  /**
   * Optional: bf16 bits (LE, as f32BitsToBf16Bits) of sums[from, to) into out at element `at`;
   * returns how many leading elements it encoded (0 when it cannot, e.g. sums not from allocAccumulator).
   */
  encodeBf16Into?(sums: Float32Array, from: number, to: number, out: Uint8Array, at: number): number;
  /** Optional: hands back an accumulator from allocAccumulator for reuse (the caller must not touch it again). */
  releaseAccumulator?(acc: Float32Array): void;
  /** Optional: a merger for k sources (else merge.ts's portable one). */
  merger?(k: number): FoldMerger;
  /** Optional: the memory sockets may read deposits into so the merger reads them in place (receive-arena.ts); made on first call. */
  receiveArena?(): ReceiveArena | null;
}

/** The active kernel's receive arena (made on the first call), or null where it has none. */
export function receiveArena(): ReceiveArena | null {
  return active.receiveArena?.() ?? null;
}

/** A zeroed accumulator from the active kernel (or a plain Float32Array). */
export function allocAccumulator(n: number, uninitialized = false): Float32Array {
  return active.allocAccumulator?.(n, uninitialized) ?? new Float32Array(n);
}

/** Returns an accumulator to the kernel that made it (a no-op for plain arrays). */
export function releaseAccumulator(acc: Float32Array): void {
  active.releaseAccumulator?.(acc);
}

const STAGE_ELEMS = 16 * 1024;
const stageF = new Float32Array(STAGE_ELEMS);
const stageB = new Uint8Array(stageF.buffer);
const stageU = new Uint32Array(stageF.buffer);

// (a + 0) + b and a + b are evaluated in f64 and rounded once to f32 on the
// store: exact for sums of two f32 values (53 >= 2 x 24 + 2 bits).
function addF32Js(acc: Float32Array, src: Uint8Array, accOffset = 0, fromZero = false): void {
  const n = src.length >>> 2;
  const z = fromZero ? 0 : -0; // x + -0 === x for every x, including -0
  if (LITTLE_ENDIAN_HOST && (src.byteOffset & 3) === 0) {
    const v = new Float32Array(src.buffer, src.byteOffset, n);
    for (let i = 0; i < n; i++) acc[accOffset + i] = acc[accOffset + i] + z + v[i];
    return;
  }
  if (!LITTLE_ENDIAN_HOST) {
    const dv = new DataView(src.buffer, src.byteOffset, n * 4);
    for (let i = 0; i < n; i++) acc[accOffset + i] = acc[accOffset + i] + z + dv.getFloat32(i * 4, true);
    return;
  }
  for (let base = 0; base < n; base += STAGE_ELEMS) {
    const m = Math.min(STAGE_ELEMS, n - base);
    stageB.set(src.subarray(base * 4, (base + m) * 4));
    const o = accOffset + base;
    for (let i = 0; i < m; i++) acc[o + i] = acc[o + i] + z + stageF[i];
  }
}

function addBf16Js(acc: Float32Array, src: Uint8Array, accOffset = 0): void {
  const n = src.length >>> 1;
  for (let base = 0; base < n; base += STAGE_ELEMS) {
    const m = Math.min(STAGE_ELEMS, n - base);
    const b = (base * 2) | 0;
    for (let i = 0; i < m; i++) stageU[i] = (src[b + 2 * i] | (src[b + 2 * i + 1] << 8)) << 16;
    const o = accOffset + base;
    for (let i = 0; i < m; i++) acc[o + i] += stageF[i];
  }
}

/** The portable kernel: plain loops over typed arrays. */
export const jsFoldKernel: FoldKernel = { name: 'js', addF32Into: addF32Js, addBf16Into: addBf16Js };

let active: FoldKernel = jsFoldKernel;

export function getFoldKernel(): FoldKernel {
  return active;
}

/** Swaps the kernel every fold uses (start-up, tests and the benchmark). */
export function setFoldKernel(k: FoldKernel): void {
  active = k;
}

export function addF32Into(acc: Float32Array, src: Uint8Array, accOffset = 0, fromZero = false): void {
  active.addF32Into(acc, src, accOffset, fromZero);
}

export function addBf16Into(acc: Float32Array, src: Uint8Array, accOffset = 0): void {
  active.addBf16Into(acc, src, accOffset);
}
