// The receive arena: fixed-size blocks of the fold kernel's own WebAssembly
// memory that a relay's rank sockets read into (src-main/engine/arena-reads.ts),
// so a deposit's payload is already where the merge's SIMD sums read it and
// the fold costs one pass over the bytes instead of a copy into the kernel's
// slots and then a pass (kernel-wasm.ts). The memory never grows (growing
// would detach every view of it), so blocks are lent and given back:
//
// - a socket holds the block it is reading into, and lets go once it moves on;
// - a deposit's staging (staging.ts) holds every block it kept a view of,
//   until the round is done with the bytes (FoldAccumulator.reset or the merge).
//
// A block returns to the free list when nobody holds it; the free list is
// LIFO so the blocks reused first are the ones already paged in. Whoever
// receives a view of a block without holding it may use it only until it
// returns (a consumer's call): that is the contract of arena-backed chunks.
// When every block is lent, readers fall back to ordinary buffers, which the
// merge copies into its slots as before.

/** Every arena by its memory, so a view can be traced to the arena that lent it. */
const byMemory = new WeakMap<ArrayBufferLike, ReceiveArena>();

/** The arena `view` lies in, or null (an ordinary buffer). */
export function arenaHolding(view: Uint8Array): ReceiveArena | null {
  const a = byMemory.get(view.buffer);
  return a && a.contains(view) ? a : null;
}

export class ReceiveArena {
  /** The whole memory (the merge's header area, then the blocks). */
  readonly bytes: Uint8Array;
  private readonly holds: Int32Array;
  private readonly free: number[] = [];

  /**
   * @param memory the kernel's memory (never grown)
   * @param firstByte where block 0 starts (below it: the merge's slots and table)
   * @param blockBytes bytes per block
   */
  constructor(
    memory: ArrayBuffer,
    private readonly firstByte: number,
    readonly blockBytes: number,
  ) {
    this.bytes = new Uint8Array(memory);
    const blocks = Math.floor((memory.byteLength - firstByte) / blockBytes);
    if (blocks < 1) throw new RangeError('receive arena: no room for a block');
    this.holds = new Int32Array(blocks);
    // Popped from the end: block 0 first.
    for (let i = blocks - 1; i >= 0; i--) this.free.push(i);
    byMemory.set(memory, this);
  }

  get blockCount(): number {
    return this.holds.length;
  }

  /** Blocks lent out now (tests bound memory with it). */
  get blocksInUse(): number {
    let n = 0;
    for (const h of this.holds) if (h > 0) n++;
    return n;
  }

  /** A free block, held once by the caller; -1 when every block is lent. */
  take(): number {
    // The free list may name blocks a run took since they were freed: skipped here.
    for (let b = this.free.pop(); b !== undefined; b = this.free.pop()) {
      if (this.holds[b] !== 0) continue;
      this.holds[b] = 1;
      return b;
    }
    return -1;
  }

  /**
   * `n` free blocks in a row, each held once (the fold's sums: a tensor's
   * sums are one array, and in this memory the merge writes them in place);
   * the first block's index, or -1 when no such run is free. Runs are taken
   * from the top of the memory, socket reads from the bottom, so the two
   * rarely cut each other's room.
   */
  takeRun(n: number): number {
    let run = 0;
    for (let b = this.holds.length - 1; b >= 0; b--) {
      run = this.holds[b] === 0 ? run + 1 : 0;
      if (run === n) {
        for (let i = b; i < b + n; i++) this.holds[i] = 1;
        return b;
      }
    }
    return -1;
  }

  /** Byte offset of block `b` in the memory. */
  offsetOf(b: number): number {
    return this.firstByte + b * this.blockBytes;
  }

  /** The block holding memory offset `at`. */
  blockAt(at: number): number {
    return Math.floor((at - this.firstByte) / this.blockBytes);
  }

  /** Block `b` from byte `from` to its end. */
  view(b: number, from = 0): Uint8Array {
    const at = this.firstByte + b * this.blockBytes;
    return this.bytes.subarray(at + from, at + this.blockBytes);
  }

  /** True when `view` lies in this arena's blocks. */
  contains(view: Uint8Array): boolean {
    return (
      view.buffer === this.bytes.buffer &&
      view.byteOffset >= this.firstByte &&
      view.byteOffset + view.length <= this.firstByte + this.holds.length * this.blockBytes
    );
  }

  /** True when memory offsets `a` and `b` lie in the same block. */
  sameBlock(a: number, b: number): boolean {
    return (
      Math.floor((a - this.firstByte) / this.blockBytes) ===
      Math.floor((b - this.firstByte) / this.blockBytes)
    );
  }

  /** Holds every block `view` spans (returns false, holding nothing, for a view outside the arena). */
  retain(view: Uint8Array): boolean {
    if (!this.contains(view) || view.length === 0) return false;
    const [first, last] = this.span(view);
    for (let b = first; b <= last; b++) {
      if (this.holds[b] <= 0) throw new Error(`receive arena: block ${b} retained while free`);
      this.holds[b]++;
    }
    return true;
  }

  /** Lets go of every block `view` spans (a view retain() accepted). */
  release(view: Uint8Array): void {
    if (!this.contains(view) || view.length === 0) return;
    const [first, last] = this.span(view);
    for (let b = first; b <= last; b++) this.releaseBlock(b);
  }

  /** Lets go of block `b` once (take() or a retain). */
  releaseBlock(b: number): void {
    if (this.holds[b] <= 0) throw new Error(`receive arena: block ${b} released more often than held`);
    if (--this.holds[b] === 0) this.free.push(b);
  }

  private span(view: Uint8Array): [number, number] {
    const rel = view.byteOffset - this.firstByte;
    return [Math.floor(rel / this.blockBytes), Math.floor((rel + view.length - 1) / this.blockBytes)];
  }
}

/** Below this much room left in its block, a reader moves to a fresh block. */
export const ARENA_MIN_READ = 64 * 1024;

/**
 * One stream's reads into an arena (a socket's, arena-reads.ts; tests and
 * the bench copy into it as a socket would): each read lands in the rest of
 * the reader's current block, which it holds until it moves on; with every
 * block lent, reads land in fresh ordinary buffers instead.
 */
export class ArenaReader {
  private block = -1;
  private used = 0;

  constructor(private readonly arena: ReceiveArena) {}

  /** Where the next read may land (up to its length). */
  space(): Uint8Array {
    if (this.block >= 0 && this.arena.blockBytes - this.used >= ARENA_MIN_READ)
      return this.arena.view(this.block, this.used);
    this.close();
    this.block = this.arena.take();
    this.used = 0;
    return this.block >= 0 ? this.arena.view(this.block) : new Uint8Array(ARENA_MIN_READ);
  }

  /** The `n` bytes a read put at the start of `space` (the last space() returned), as a view; the next read lands after them. */
  filled(space: Uint8Array, n: number): Uint8Array {
    if (this.block >= 0 && space.buffer === this.arena.bytes.buffer) this.used += n;
    return space.subarray(0, n);
  }

  /** Lets go of the current block (the stream ended). */
  close(): void {
    if (this.block >= 0) this.arena.releaseBlock(this.block);
    this.block = -1;
  }
}
