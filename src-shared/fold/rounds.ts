// Accumulators for successive rounds that recycle their memory. A fresh
// model-sized accumulator costs a page fault per 4 KiB on its first write
// (about as long as the whole fold of a 16 MiB frame on this kind of
// machine), so allocating one per round halves the fold's speed. Reusing the
// accumulator right away is not safe either: result() hands out views of the
// sums, and the HostFrame made of them may still be on its way upstream.
//
// So each round takes the accumulator of the round `depth` rounds back. With
// depth 2, round r+1 reuses round r-1's memory, and it does so when round r
// ships, that is once every live local rank deposited round r. A rank sends
// round r only after adopting round r-1's consensus, which the controller
// broadcasts only after receiving this host's round r-1 HostFrame whole: by
// then those bytes have left the process.
import { FoldAccumulator, type FoldOptions } from './accumulator';

export class FoldRounds {
  private readonly ring: FoldAccumulator[];
  private at = 0;

  constructor(depth = 2, opts: FoldOptions = {}) {
    if (!(depth >= 1)) throw new RangeError('FoldRounds: depth must be at least 1');
    this.ring = Array.from({ length: depth }, () => new FoldAccumulator(opts));
  }

  /** The current round's accumulator. */
  get current(): FoldAccumulator {
    return this.ring[this.at];
  }

  /** Moves to the next round: the accumulator of `depth` rounds back, reset (its memory back in the kernel's pool). */
  next(): FoldAccumulator {
    this.at = (this.at + 1) % this.ring.length;
    const acc = this.ring[this.at];
    acc.reset();
    return acc;
  }
}
