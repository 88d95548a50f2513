// The fold's merge, run when the round is taken (accumulator.ts): every
// committed deposit's payload of a summed tensor is still in its staging, so
// the sums are computed in one pass per tensor, block by block: each
// source's next block is gathered into the kernel's slots (the only copy of
// a deposit's bytes when they were staged by reference), then the k sources
// are summed from +0.0 in commit order (flodl's promotion, then its adds in
// merge order, one f32 rounding per add) and stored as f32 sums or, for a
// bf16 round, straight as their bf16 bits (RNE): no model-sized f32
// accumulator is read and written once per deposit.
//
// The WebAssembly kernel brings its own SIMD merger (kernel-wasm.ts); this
// file has the portable one, used wherever the kernel has none.
import { DTYPE_BF16 } from '../wire/constants';
import { getFoldKernel, type FoldMerger } from './kernel';
import type { ByteCursor, DepositStaging } from './staging';

const JS_SLOT_BYTES = 16 * 1024;
const JS_BLOCK_ELEMS = JS_SLOT_BYTES / 2;

/** flodl's f32 -> bf16 bits: round to nearest even, NaN kept quiet (as f32BitsToBf16Bits). */
export function bf16BitsOfF32Bits(b: number): number {
  return (b & 0x7fffffff) > 0x7f800000 ? (b >>> 16) | 0x0040 : (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
}

/** The portable merger: plain loops, endian-independent (slots hold LE bytes). */
class JsMerger implements FoldMerger {
  readonly slotBytes = JS_SLOT_BYTES;
  private readonly slots: Uint8Array[] = [];
  private readonly sums = new Float32Array(JS_BLOCK_ELEMS);
  private readonly sumBits = new Uint32Array(this.sums.buffer);
  private readonly widened = new Float32Array(JS_BLOCK_ELEMS);
  private readonly widenedBits = new Uint32Array(this.widened.buffer);

  slot(j: number): Uint8Array {
    while (this.slots.length <= j) this.slots.push(new Uint8Array(JS_SLOT_BYTES));
    return this.slots[j];
  }

  /** sums[i] = (j === 0 ? +0 : sums[i]) + element i of slot j, widened from bf16 or read as LE f32. */
  private addSlot(j: number, n: number, bf16: boolean): void {
    const b = this.slots[j];
    const w = this.widened;
    const wb = this.widenedBits;
    if (bf16) for (let i = 0; i < n; i++) wb[i] = ((b[2 * i] | (b[2 * i + 1] << 8)) << 16) >>> 0;
    else {
      const dv = new DataView(b.buffer, b.byteOffset, n * 4);
      for (let i = 0; i < n; i++) w[i] = dv.getFloat32(i * 4, true);
    }
    const s = this.sums;
    // f64 adds of two f32 values rounded once on the store: the f32 sum (53 >= 2 x 24 + 2 bits).
    if (j === 0) for (let i = 0; i < n; i++) s[i] = 0 + w[i];
    else for (let i = 0; i < n; i++) s[i] = s[i] + w[i];
  }

  sumF32(k: number, n: number, out: Float32Array, outAt: number): void {
    for (let j = 0; j < k; j++) this.addSlot(j, n, false);
    out.set(this.sums.subarray(0, n), outAt);
  }

  sumBf16(k: number, n: number, out: Uint8Array, outAt: number): void {
    for (let j = 0; j < k; j++) this.addSlot(j, n, true);
    const u = this.sumBits;
    for (let i = 0, p = outAt * 2; i < n; i++, p += 2) {
      const h = bf16BitsOfF32Bits(u[i]);
      out[p] = h & 0xff;
      out[p + 1] = h >>> 8;
    }
  }
}

let jsMerger: JsMerger | null = null;

/** The active kernel's merger for k sources, else the portable one. */
export function mergerFor(k: number): FoldMerger {
  const m = getFoldKernel().merger?.(k);
  if (m) return m;
  jsMerger ??= new JsMerger();
  return jsMerger;
}

/** One summand of a tensor: its payload's bytes in a committed deposit's staging. */
export interface MergeSource {
  staging: DepositStaging;
  start: number;
}

/**
 * The sums from +0.0 of `sources` (each n elements of `dtype`, in commit
 * order) into `out`: f32 sums (a Float32Array of n) or bf16 bits (n x 2
 * bytes). Yields once `slice.work` element-adds reach `slice.elems` (the
 * count carries over from merge to merge), so a caller that must not block its
 * event loop can pause there; the merger's slots are refilled for every
 * block, so merges may interleave.
 */
export function* mergeSources(
  sources: readonly MergeSource[],
  n: number,
  dtype: number,
  out: Float32Array | Uint8Array,
  slice: { elems: number; work: number },
): Generator<void, void> {
  const k = sources.length;
  if (k === 0) throw new Error('fold: merging a tensor without a payload');
  const bf16 = dtype === DTYPE_BF16;
  const size = bf16 ? 2 : 4;
  const cursors = sources.map((s) => s.staging.cursor(s.start));
  for (let o = 0; o < n;) {
    const m = mergerFor(k);
    const c = stepElems(m, cursors, size, n - o);
    const bytes = c * size;
    for (let j = 0; j < k; j++) {
      const cur = cursors[j];
      if (m.memory && cur.runBuffer() === m.memory && cur.runLength() >= bytes) {
        m.readInPlace!(j, cur.runOffset());
        cur.skip(bytes);
      } else cur.read(m.slot(j), 0, bytes);
    }
    if (bf16) m.sumBf16(k, c, out as Uint8Array, o);
    else m.sumF32(k, c, out as Float32Array, o);
    o += c;
    slice.work += c * k;
    if (slice.work >= slice.elems) {
      slice.work = 0;
      yield;
    }
  }
}

/**
 * Elements the next step sums. From ordinary memory, a slot's worth (every
 * source is copied into its slot). With sources in the merger's memory (the
 * receive arena), a step is cut where such a source's run of memory ends, so
 * it is read in place; a source copied in a step with an in-place one is cut
 * at its own segment's end (or to its one element split across segments), so
 * the copies stay short and the next step reads in place again.
 */
function stepElems(m: FoldMerger, cursors: readonly ByteCursor[], size: number, left: number): number {
  const copyElems = Math.min(m.slotBytes / size, left);
  if (!m.memory) return copyElems;
  let inPlace = Math.min((m.inPlaceBytes ?? m.slotBytes) / size, left);
  let copied = copyElems;
  let any = false;
  for (const cur of cursors) {
    const whole = Math.floor(cur.runLength() / size);
    if (whole >= 1 && cur.runBuffer() === m.memory) {
      inPlace = Math.min(inPlace, whole);
      any = true;
    } else copied = Math.min(copied, Math.max(whole, 1));
  }
  return any ? Math.min(inPlace, copied) : copyElems;
}
