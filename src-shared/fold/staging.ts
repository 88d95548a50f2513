// Per-deposit staging: a streamed deposit's tensor bytes are copied here as
// they arrive and reach the sums only once the frame's footer MAC verified
// (WIRE.md 4.4: a deposit is atomic; no byte of an unverified frame reaches a
// sum). The staging is a list of fixed 1 MiB blocks taken as bytes arrive, so
// what a deposit holds never exceeds the bytes actually received plus one
// block, whatever lengths its (unauthenticated) header declares (issue 17.3:
// memory follows the bytes).
//
// Each tensor's bytes start at a multiple of 4 inside the deposit (at most 3
// bytes of padding per tensor) and blocks are a multiple of 4 bytes long, so
// an f32 or bf16 element never straddles two blocks: the fold kernel adds
// block by block with no carry, and every piece is 4-aligned (the JS kernel's
// fast path). Blocks are recycled through a small pool: a fresh block costs a
// page fault per 4 KiB on its first write.

/** Bytes per staging block: the one chunk an unauthenticated length may cost beyond the bytes received. */
export const STAGE_BLOCK_BYTES = 1 << 20;

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
  /** Logical bytes written (data plus alignment padding). */
  private length = 0;

  /** Where the next tensor's bytes start (the position rounded up to 4). */
  alignTensor(): number {
    this.length = (this.length + 3) & ~3;
    return this.length;
  }

  /** Copies `bytes` in, taking a block only when the bytes reach it. */
  append(bytes: Uint8Array): void {
    let pos = 0;
    while (pos < bytes.length) {
      const at = this.length % STAGE_BLOCK_BYTES;
      const blockIndex = (this.length - at) / STAGE_BLOCK_BYTES;
      if (blockIndex === this.blocks.length) {
        this.blocks.push(takeBlock());
        blocksInUse++;
      }
      const n = Math.min(STAGE_BLOCK_BYTES - at, bytes.length - pos);
      this.blocks[blockIndex].set(bytes.subarray(pos, pos + n), at);
      pos += n;
      this.length += n;
    }
  }

  /** Bytes staged so far (with padding). */
  get size(): number {
    return this.length;
  }

  /** Calls `f` for each piece of [start, start + len), split at block boundaries, with the piece's offset in the range. */
  forEachPiece(start: number, len: number, f: (piece: Uint8Array, offset: number) => void): void {
    let done = 0;
    while (done < len) {
      const pos = start + done;
      const at = pos % STAGE_BLOCK_BYTES;
      const n = Math.min(STAGE_BLOCK_BYTES - at, len - done);
      f(this.blocks[(pos - at) / STAGE_BLOCK_BYTES].subarray(at, at + n), done);
      done += n;
    }
  }

  /** [start, start + len) as one array: a view when it lies in one block, else copied into `alloc(len)`. */
  contiguous(start: number, len: number, alloc: (n: number) => Uint8Array): Uint8Array {
    const at = start % STAGE_BLOCK_BYTES;
    if (at + len <= STAGE_BLOCK_BYTES) {
      if (len === 0) return new Uint8Array(0);
      return this.blocks[(start - at) / STAGE_BLOCK_BYTES].subarray(at, at + len);
    }
    const out = alloc(len);
    this.forEachPiece(start, len, (piece, offset) => out.set(piece, offset));
    return out;
  }

  /** Hands the blocks back to the pool; the staging is empty afterwards. */
  release(): void {
    for (const b of this.blocks) {
      blocksInUse--;
      if (pool.length < POOL_MAX) pool.push(b);
    }
    this.blocks = [];
    this.length = 0;
  }
}
