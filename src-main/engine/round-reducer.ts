// The controller's reduce loop (WIRE.md 4.5): wait_for_round over the
// connections that still have a live rank, reduce_realized_work over their
// verified contributions, and the elastic scatter of the consensus. Each wake
// (a contribution, a death, a 100 ms poll) first forwards DeclareDead for
// every newly dead rank to the relay that owns it (dead-diff forwarding).
// Which contributions count is decided when the round is taken: connections
// whose ranks are all dead by then contribute nothing.
import { releaseAccumulator } from '@shared/fold';
import { REC_BROADCAST } from '@shared/wire/constants';
import { encodeLenPrefix } from '@shared/wire/len-frame';
import { encodeMuxRecord } from '@shared/wire/mux';
import type { ContributionSource, ControllerEvent, ControllerOptions } from './controller-options';
import { releaseFrame, type CollectedFrame } from './frame-collector';
import { encodeRoundFrameSliced, muxHeaderSliced, reduceSliced } from './sliced';

export class RoundReducer {
  /** The round being collected. */
  round = 0;
  /** Set once a shutdown was requested; the loop ends at its next wake. */
  stopping: { reason: string; error: boolean } | null = null;
  private wakeWaiter: (() => void) | null = null;
  private poll: NodeJS.Timeout | null = null;
  private readonly forwarded = new Set<number>();
  private readonly loopDone: Promise<void>;
  private begin!: () => void;

  constructor(
    private readonly opts: ControllerOptions,
    private readonly sources: readonly ContributionSource[],
    private readonly emit: (e: ControllerEvent) => void,
  ) {
    opts.dead.onDeath(() => this.wake());
    this.loopDone = new Promise<void>((r) => (this.begin = r)).then(() => this.loop());
  }

  /** Every rank is covered: rounds begin. */
  start(): void {
    this.poll ??= setInterval(() => this.wake(), this.opts.pollMs ?? 100);
    this.begin();
  }

  /** Ends the loop (started or not); resolves when it has. */
  stop(): Promise<void> {
    this.begin();
    return this.loopDone;
  }

  finished(): Promise<void> {
    return this.loopDone;
  }

  /** Lets the round wait look again. */
  wake(): void {
    const w = this.wakeWaiter;
    this.wakeWaiter = null;
    w?.();
  }

  requestShutdown(reason: string, error = false): void {
    if (this.stopping) return;
    this.stopping = { reason, error };
    this.wake();
  }

  private liveRanks(src: ContributionSource): number[] {
    return src.ranks.filter((r) => !this.opts.dead.isDead(r));
  }

  /** Live ranks whose contribution the current round still lacks (in fold mode: every live rank of a host without its HostFrame). */
  waitingFor(): number[] {
    if (this.opts.mode === 'fold')
      return this.sources.filter((s) => !s.frames.has(-1)).flatMap((s) => this.liveRanks(s));
    return this.sources.flatMap((s) => this.liveRanks(s).filter((r) => !s.frames.has(r)));
  }

  private hasContribution(s: ContributionSource): boolean {
    if (this.opts.mode === 'fold') return s.frames.has(-1);
    return this.liveRanks(s).every((r) => s.frames.has(r));
  }

  /** Dead-diff forwarding (WIRE.md 4.5): each newly dead rank's DeclareDead goes once to its relay. */
  private forwardDeadDiff(): void {
    if (this.opts.historical?.noDeclareDead) return;
    for (const rank of this.opts.dead.list()) {
      if (this.forwarded.has(rank)) continue;
      this.forwarded.add(rank);
      const src = this.sources.find((s) => s.ranks.includes(rank));
      if (!src || src.direct || !src.open) continue;
      const rec = encodeMuxRecord({ kind: 'Control', msg: { type: 'DeclareDead', rank } }, this.opts.mac);
      src.conn.send(rec);
      const recordSeq = src.recorder.record({
        dir: 'down',
        layer: 'mux',
        kind: 'DeclareDead',
        rank,
        length: rec.length,
        summary: `DeclareDead rank=${rank}`,
        bytes: [rec],
      });
      this.emit({ type: 'declareDead', rank, host: src.host, recordSeq });
    }
  }

  /** The accepted connections in the recorded order of this round, when a replay gives one (unknown ones last). */
  private replayOrder(accepted: ContributionSource[]): ContributionSource[] {
    const groups = this.opts.mergeOrder?.(this.round);
    if (!groups) return accepted;
    const flat = groups.flat();
    const pos = (s: ContributionSource) => {
      const i = Math.min(...s.ranks.map((r) => flat.indexOf(r)).filter((x) => x >= 0));
      return Number.isFinite(i) ? i : flat.length;
    };
    return [...accepted].sort((a, b) => pos(a) - pos(b));
  }

  /** wait_for_round: the connections to reduce once each expected one has its contribution, null on shutdown. */
  private async waitForRound(): Promise<ContributionSource[] | null> {
    for (;;) {
      this.forwardDeadDiff();
      if (this.stopping) return null;
      const expected = this.sources.filter((s) => this.liveRanks(s).length > 0);
      if (expected.length === 0) {
        this.requestShutdown('no connection has a live rank');
        return null;
      }
      if (expected.every((s) => this.hasContribution(s))) {
        for (const s of this.sources) if (!expected.includes(s)) s.frames.clear();
        return expected;
      }
      await new Promise<void>((r) => (this.wakeWaiter = r));
    }
  }

  private async loop(): Promise<void> {
    try {
      for (let accepted = await this.waitForRound(); accepted; accepted = await this.waitForRound()) {
        const t0 = performance.now();
        const frames: CollectedFrame[] = [];
        const ranks: number[] = [];
        // Connection-index order, then rank order within a connection (forward mode);
        // a replay may enforce a recorded order (ControllerOptions.mergeOrder).
        for (const s of this.replayOrder(accepted)) {
          for (const k of [...s.frames.keys()].sort((a, b) => a - b)) {
            frames.push(s.frames.get(k)!);
            if (k >= 0) ranks.push(k);
          }
          s.frames.clear();
        }
        // Model-sized work in slices: the event loop keeps serving sockets and timers meanwhile.
        // The consensus's f32 data are views of kernel memory, given back once every Broadcast of it is sent.
        const lent: Float32Array[] = [];
        const consensus = await reduceSliced(frames, lent);
        // The contributions' buffers are read: back to the pool for the next round's (buffer-pool.ts).
        for (const f of frames) releaseFrame(f);
        const { chunks, length } = await encodeRoundFrameSliced(consensus, this.opts.mac);
        const header =
          this.opts.mode === 'direct'
            ? encodeLenPrefix(length, this.opts.ceiling)
            : await muxHeaderSliced(REC_BROADCAST, 0, chunks, this.opts.mac);
        this.scatter([header, ...chunks], length, () => lent.forEach(releaseAccumulator));
        const round = this.round++;
        this.emit({
          type: 'round',
          round,
          hosts: accepted.map((s) => s.host),
          order: this.opts.mode === 'fold' ? null : [...ranks],
          ranks: this.opts.mode === 'fold' ? null : ranks.sort((a, b) => a - b),
          weight: consensus.weight,
          ms: performance.now() - t0,
          consensusBytes: length,
        });
      }
    } catch (e) {
      this.stopping ??= { reason: `reduce error: ${(e as Error).message}`, error: true };
      this.emit({ type: 'error', message: (e as Error).message });
    } finally {
      if (this.poll) clearInterval(this.poll);
      const s = this.stopping ?? { reason: 'stopped', error: false };
      this.emit({ type: 'shutdown', reason: s.reason, error: s.error });
    }
  }

  /** Elastic scatter: one Broadcast per connection with a live rank; a failed write declares its ranks dead. */
  private scatter(parts: Uint8Array[], length: number, sent: () => void): void {
    // `sent` runs once every connection's writer is done with `parts` (written or dropped).
    let writing = 1;
    const oneSent = () => --writing === 0 && sent();
    const failed = (s: ContributionSource, err: Error) => {
      if (this.opts.historical?.failFastScatter)
        this.requestShutdown(
          `scatter to ${s.hostName} failed: ${err.message} (fail-fast scatter, historical)`,
          true,
        );
      else for (const r of this.liveRanks(s)) this.opts.dead.declare(r, 'scatter');
    };
    for (const s of this.sources) {
      if (this.liveRanks(s).length === 0 || !s.open) continue;
      if (s.conn.writer.error) {
        failed(s, s.conn.writer.error);
        if (this.opts.historical?.failFastScatter) break;
        continue;
      }
      writing++;
      s.conn.writer.enqueue(parts, oneSent);
      s.recorder.record({
        dir: 'down',
        layer: s.direct ? 'lenframe' : 'mux',
        kind: s.direct ? 'RoundFrame' : 'Broadcast',
        round: this.round,
        length: parts[0].length + length,
        summary: `consensus ${length} B`,
        bytes: parts,
      });
      void s.conn.writer.idle().then(() => {
        if (s.conn.writer.error) failed(s, s.conn.writer.error);
      });
    }
    oneSent();
  }
}
