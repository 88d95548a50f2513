// The relay's data channel in flodl 0.7's `fold` mode (WIRE.md 4.4): each
// local rank's RoundFrame is parsed and verified as it streams and deposited
// into the round's FoldAccumulator; when every local rank not dead has
// deposited (and one deposit exists), the sums are re-encoded in the round's
// dtype, re-signed, and sent up as one HostFrame. A rank's death decides its
// contribution at merge time: a deposit committed (MAC verified) before the
// death stays, one still arriving is dropped.
import { REC_HOST_FRAME } from '@shared/wire/constants';
import { RoundFrameStreamParser, type RoundFrameSink } from '@shared/wire/round-frame-stream';
import { FoldRounds } from '@shared/fold';
import { DataUplink, type FrameInProgress } from './data-uplink';
import { encodeRoundFrameSliced, muxHeaderSliced, yieldToLoop } from './sliced';

export class FoldUplink extends DataUplink {
  private round = 0;
  /** The incremental fold of the current round (accumulators recycled, see FoldRounds). */
  private readonly folds = new FoldRounds(2, { ceiling: this.opts.ceiling });
  private acc = this.orderedFor(this.folds.current, 0);

  /** A replay's recorded merge order for the round, if any (lab-only, RelayOptions.mergeOrder). */
  private orderedFor(acc: FoldRounds['current'], round: number): FoldRounds['current'] {
    acc.setMergeOrder(this.opts.mergeOrder?.(round) ?? null);
    return acc;
  }

  protected beginFrame(rank: number, len: number): FrameInProgress {
    // The deposit is staged, committed only in onComplete once the frame's MAC verified (issue 16 #1),
    // and summed when the round ships. Staged by reference: the chunks are the rank socket's own
    // 'data' buffers (or a link fault's slices and copies of them), which nothing writes again, so
    // the staging costs no copy; the merge reads them once.
    const sink: RoundFrameSink = this.acc.beginDeposit(rank, { byReference: true });
    const parser = new RoundFrameStreamParser(this.opts.mac, {
      ceiling: this.opts.ceiling,
      totalLen: len,
      // flodl ignores bytes after the footer inside a rank's blob (issue 16 item 6).
      trailing: 'ignore',
      sink,
    });
    return {
      chunk: (b) => parser.push(b),
      end: () => {
        parser.end();
        this.maybeShip();
      },
    };
  }

  // The rank sockets read into the receive arena: the parser and the tap copy what they keep, and the
  // deposit's staging holds the blocks its payload lies in until the round is done with them.
  protected override readsIntoArena(): boolean {
    return true;
  }

  protected afterDeath(rank: number): void {
    // Its staged, unverified deposit goes; a deposit it committed before dying stays (flodl's merge-time rule).
    this.acc.dropPending(rank);
    this.maybeShip();
  }

  /** Ships the round when every local alive rank has deposited (and one deposit exists). */
  private maybeShip(): void {
    if (this.shut || this.acc.depositCount === 0) return;
    for (const r of this.ranks.keys()) if (!this.dead.has(r) && !this.acc.hasDeposited(r)) return;
    // Take the round now; re-encode and re-sign it in slices (records queued after it wait their turn).
    const taken = this.acc.resultSliced(yieldToLoop);
    const depositors = this.acc.ranks;
    // The order the fold merged the deposits in: f32 sums depend on it, and the verdict recomputes them.
    const order = this.acc.mergeOrder;
    const round = this.round++;
    this.acc = this.orderedFor(this.folds.next(), this.round);
    this.sendUpLater(async () => {
      const { chunks, length } = await encodeRoundFrameSliced((await taken)!, this.opts.mac);
      this.emit({ type: 'folded', round, depositors, order, bytes: length });
      return [await muxHeaderSliced(REC_HOST_FRAME, 0, chunks, this.opts.mac), ...chunks];
    });
  }

  override waitingFor(): number[] {
    // Before any deposit the barrier has not started: nobody is being waited for yet.
    if (this.shut || this.acc.depositCount === 0) return [];
    return [...this.ranks.keys()].filter((r) => !this.dead.has(r) && !this.acc.hasDeposited(r));
  }
}
