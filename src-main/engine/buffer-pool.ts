// Model-sized buffers recycled from round to round. On this kind of VM the
// first touch of fresh memory costs about 2.8 ms per MiB (a page fault per
// 4 KiB page; measured: 45 ms for a fresh 16 MiB buffer, 0.7 ms for 256 KiB)
// against about 0.05 ms per MiB to write memory already touched, so a buffer
// taken fresh every round paid its page faults on the round's clock: the
// controller's HostFrames (and direct mode's rank frames) and the relay's
// Broadcast, every round. A buffer given back serves the next unit it fits.
//
// A buffer that is never given back is simply garbage-collected: only code
// that knows every reader of a buffer is done gives it back.

export interface BufferPoolLimits {
  /** Free bytes kept at most (beyond this a buffer given back is left to the GC). */
  maxFreeBytes: number;
  /** Free buffers kept at most. */
  maxFree: number;
}

export const DEFAULT_POOL_LIMITS: BufferPoolLimits = { maxFreeBytes: 2 ** 32, maxFree: 64 };

export class BufferPool {
  private free: Uint8Array[] = [];
  private freeBytes = 0;
  private taken = 0;
  private fresh = 0;
  /** Buffers this pool handed out and not yet got back. */
  private readonly lent = new WeakSet<ArrayBufferLike>();

  constructor(private readonly limits: BufferPoolLimits = DEFAULT_POOL_LIMITS) {}

  /**
   * A view of exactly `n` bytes, of a buffer given back earlier when one fits
   * (at least `n` and at most twice that, so a small unit never pins a large
   * buffer), else fresh. The contents are whatever was there: the taker
   * writes every byte it reads.
   */
  take(n: number): Uint8Array {
    if (n === 0) return new Uint8Array(0);
    this.taken++;
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const len = this.free[i].length;
      if (len >= n && len <= 2 * n && (best < 0 || len < this.free[best].length)) best = i;
    }
    let whole: Uint8Array;
    if (best >= 0) {
      whole = this.free.splice(best, 1)[0];
      this.freeBytes -= whole.length;
    } else {
      whole = new Uint8Array(n);
      this.fresh++;
    }
    this.lent.add(whole.buffer);
    return whole.subarray(0, n);
  }

  /** Gives back a view `take` returned; anything else (or a second give) is ignored. */
  give(view: Uint8Array): void {
    if (!this.lent.has(view.buffer)) return;
    this.lent.delete(view.buffer);
    const whole = new Uint8Array(view.buffer);
    if (this.free.length >= this.limits.maxFree || this.freeBytes + whole.length > this.limits.maxFreeBytes)
      return;
    this.free.push(whole);
    this.freeBytes += whole.length;
  }

  /** Buffers kept for reuse and their bytes; buffers taken, and how many of them were fresh. */
  get stats(): { free: number; freeBytes: number; taken: number; fresh: number } {
    return { free: this.free.length, freeBytes: this.freeBytes, taken: this.taken, fresh: this.fresh };
  }

  /** Lets go of every free buffer (a cluster stopped: its model size may not come again). */
  clear(): void {
    this.free = [];
    this.freeBytes = 0;
  }
}

/** The engine's pool of model-sized unit buffers (cleared when a cluster stops). */
export const unitBuffers = new BufferPool();
