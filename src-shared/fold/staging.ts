// Per-deposit staging: a streamed deposit's tensor bytes are held here as
// they arrive and reach the sums only once the frame's footer MAC verified
// (WIRE.md 4.4: a deposit is atomic; no byte of an unverified frame reaches a
// sum). The staged bytes are a list of segments in arrival order:
//
// - copied (the default): bytes are copied into fixed 1 MiB blocks taken as
//   bytes arrive, so what a deposit holds never exceeds the bytes actually
//   received plus one block, whatever lengths its (unauthenticated) header
//   declares (issue 17.3: memory follows the bytes);
// - by reference (`byReference`, for producers whose chunks are never written
//   again, e.g. a socket's 'data' buffers): pieces of at least
//   MIN_REFERENCED_BYTES are kept as views of the producer's chunk, which
//   costs no copy at all; smaller pieces are still copied into blocks, so the
//   per-segment bookkeeping stays a small fraction of the bytes held and the
//   bound above holds. A view of a receive-arena block (receive-arena.ts: the
//   socket read straight into the fold kernel's memory) holds its block
//   until release(), since the arena lends blocks again.
//
// Segments have any length and alignment: the merge reads an arena segment
// in place and gathers any other element range into the kernel's slots
// (ByteCursor.read), so an element split across two socket chunks costs
// nothing special. Blocks are
// recycled through a small pool: a fresh block costs a page fault per 4 KiB on
// its first write.

import { arenaHolding, type ReceiveArena } from './receive-arena';

/** Bytes per staging block: the one chunk an unauthenticated length may cost beyond the bytes received. */
export const STAGE_BLOCK_BYTES = 1 << 20;

/** Smallest piece kept by reference: below it, a copy is cheaper than the view and its bookkeeping. */
export const MIN_REFERENCED_BYTES = 4096;
let minReferenced = MIN_REFERENCED_BYTES;

/** Tests: the smallest piece kept by reference (small frames exercise both paths); returns the previous value. */
export function setMinReferencedBytes(n: number): number {
  const was = minReferenced;
  minReferenced = Math.max(1, n);
  return was;
}

/**
 * Most released blocks kept for reuse (256 MiB, e.g. 4 ranks x 64 MiB in
 * flight); more are left to the GC. Only blocks that held received bytes are
 * ever pooled.
 */
const POOL_MAX = 256;
const pool: Uint8Array[] = [];

function takeBlock(): Uint8Array {
  return pool.pop() ?? new Uint8Array(STAGE_BLOCK_BYTES);
}

/** Blocks currently lent to deposits, for tests that bound memory (issue 17.3). */
let blocksInUse = 0;
export function stagedBlocksInUse(): number {
  return blocksInUse;
}

export class DepositStaging {
  private blocks: Uint8Array[] = [];
  /** Bytes used in the last block. */
  private blockUsed = STAGE_BLOCK_BYTES;
  /** The staged bytes, in order, and the logical end of each. */
  private segments: Uint8Array[] = [];
  private ends: number[] = [];
  private length = 0;

  constructor(private readonly byReference = false) {}

  /** Where the next tensor's bytes start. */
  alignTensor(): number {
    return this.length;
  }

  /** Stages `bytes`: kept as a view when by reference and large enough, else copied into blocks. */
  append(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (this.byReference) {
      const arena = arenaHolding(bytes);
      // A receive-arena read continuing the last segment in its block extends it (the block is held already):
      // a socket's reads into one block become one run the merge reads in place.
      if (arena && this.continuesInBlock(bytes, arena)) return this.push(bytes, true);
      if (bytes.length >= minReferenced) {
        // A view of a receive-arena block keeps the block until release().
        arena?.retain(bytes);
        return this.push(bytes, false);
      }
    }
    let pos = 0;
    while (pos < bytes.length) {
      if (this.blockUsed === STAGE_BLOCK_BYTES) {
        this.blocks.push(takeBlock());
        blocksInUse++;
        this.blockUsed = 0;
      }
      const block = this.blocks[this.blocks.length - 1];
      const n = Math.min(STAGE_BLOCK_BYTES - this.blockUsed, bytes.length - pos);
      block.set(bytes.subarray(pos, pos + n), this.blockUsed);
      this.push(block.subarray(this.blockUsed, this.blockUsed + n), true);
      this.blockUsed += n;
      pos += n;
    }
  }

  /** True when `bytes` starts where the last segment ends, in the same arena block. */
  private continuesInBlock(bytes: Uint8Array, arena: ReceiveArena): boolean {
    const prev = this.segments[this.segments.length - 1];
    return (
      prev !== undefined &&
      prev.buffer === bytes.buffer &&
      prev.byteOffset + prev.length === bytes.byteOffset &&
      prev.length > 0 &&
      arena.sameBlock(prev.byteOffset + prev.length - 1, bytes.byteOffset + bytes.length - 1)
    );
  }

  /** Adds a segment, extending the last one when it continues it in the same memory. */
  private push(view: Uint8Array, mayExtend: boolean): void {
    const last = this.segments.length - 1;
    const prev = this.segments[last];
    if (
      mayExtend &&
      prev !== undefined &&
      prev.buffer === view.buffer &&
      prev.byteOffset + prev.length === view.byteOffset
    ) {
      this.segments[last] = new Uint8Array(prev.buffer, prev.byteOffset, prev.length + view.length);
    } else this.segments.push(view);
    this.length += view.length;
    if (this.ends.length === this.segments.length) this.ends[last] = this.length;
    else this.ends.push(this.length);
  }

  /** Bytes staged so far. */
  get size(): number {
    return this.length;
  }

  /** A reader of the staged bytes from `start` on, in order. */
  cursor(start: number): ByteCursor {
    return new ByteCursor(this.segments, this.ends, start);
  }

  /** [start, start + len) as one array: a view when it lies in one segment, else copied into `alloc(len)`. */
  contiguous(start: number, len: number, alloc: (n: number) => Uint8Array): Uint8Array {
    if (len === 0) return new Uint8Array(0);
    const c = this.cursor(start);
    const one = c.view(len);
    if (one) return one;
    const out = alloc(len);
    c.read(out, 0, len);
    return out;
  }

  /** Hands the blocks back to the pool and forgets the views; the staging is empty afterwards. */
  release(): void {
    for (const b of this.blocks) {
      blocksInUse--;
      if (pool.length < POOL_MAX) pool.push(b);
    }
    this.blocks = [];
    this.blockUsed = STAGE_BLOCK_BYTES;
    if (this.byReference) for (const seg of this.segments) arenaHolding(seg)?.release(seg);
    this.segments = [];
    this.ends = [];
    this.length = 0;
  }
}

/** Sequential reads over a staging's segments (the merge's gather). */
export class ByteCursor {
  private seg: number;
  private at: number;

  constructor(
    private readonly segments: readonly Uint8Array[],
    ends: readonly number[],
    start: number,
  ) {
    // The segment holding byte `start` (binary search: a 256 MiB deposit has thousands).
    let lo = 0;
    let hi = ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ends[mid] <= start) lo = mid + 1;
      else hi = mid;
    }
    this.seg = lo;
    this.at = lo < ends.length ? start - (ends[lo] - segments[lo].length) : 0;
  }

  /** The next `len` bytes as a view when they lie in one segment (the cursor does not move), else null. */
  view(len: number): Uint8Array | null {
    const s = this.segments[this.seg];
    return s !== undefined && this.at + len <= s.length ? s.subarray(this.at, this.at + len) : null;
  }

  /** Bytes left in the current segment (0 past the staged bytes). */
  runLength(): number {
    const s = this.segments[this.seg];
    return s === undefined ? 0 : s.length - this.at;
  }

  /** The memory the current segment lies in, or null past the staged bytes. */
  runBuffer(): ArrayBufferLike | null {
    return this.segments[this.seg]?.buffer ?? null;
  }

  /** Where the next byte lies in runBuffer(). */
  runOffset(): number {
    return (this.segments[this.seg]?.byteOffset ?? 0) + this.at;
  }

  /** Moves past the next `len` bytes. */
  skip(len: number): void {
    while (len > 0) {
      const s = this.segments[this.seg];
      if (s === undefined) throw new RangeError('staging: skip past the staged bytes');
      const n = Math.min(len, s.length - this.at);
      len -= n;
      this.at += n;
      if (this.at === s.length) {
        this.seg++;
        this.at = 0;
      }
    }
  }

  /** Copies the next `len` bytes into `dst` at `dstAt` and moves past them. */
  read(dst: Uint8Array, dstAt: number, len: number): void {
    while (len > 0) {
      const s = this.segments[this.seg];
      if (s === undefined) throw new RangeError('staging: read past the staged bytes');
      const n = Math.min(len, s.length - this.at);
      dst.set(n === s.length ? s : s.subarray(this.at, this.at + n), dstAt);
      dstAt += n;
      len -= n;
      this.at += n;
      if (this.at === s.length) {
        this.seg++;
        this.at = 0;
      }
    }
  }
}
