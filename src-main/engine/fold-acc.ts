// A thin adapter over the shared fold, @shared/fold's FoldAccumulator, which
// the relay now uses directly (its streamed deposits may interleave). Only
// sliced.ts's reduceSliced still imports this name; once it calls
// FoldAccumulator.beginDeposit/sums and encodeFoldedTensor from @shared/fold,
// this file goes. There is no fold logic here.
import { FoldAccumulator, encodeFoldedTensor, type FoldedTensor } from '@shared/fold';
import { WireError } from '@shared/wire/errors';
import type { RoundFrameSink } from '@shared/wire/round-frame-stream';

export { encodeFoldedTensor, type FoldedTensor };

export class FoldAcc {
  private readonly acc = new FoldAccumulator();

  get depositCount(): number {
    return this.acc.depositCount;
  }
  hasDeposited(rank: number): boolean {
    return this.acc.hasDeposited(rank);
  }
  get ranks(): number[] {
    return this.acc.ranks;
  }
  depositSink(rank: number): RoundFrameSink {
    return this.acc.beginDeposit(rank);
  }
  /** The sums as f32 values (f32 ones are views of the accumulator: callers may scale them in place). */
  result(): { roundKind: number; weight: number; tensors: FoldedTensor[] } {
    const s = this.acc.sums();
    if (!s) throw new WireError('BAD_PAYLOAD', 'no accepted frames in this round');
    return s;
  }
}
