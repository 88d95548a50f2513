// The schedule of actions a run applies (a reproduction's, `relay-lab run --kill-rank 3@2`):
// kill, pause, resume, kill host, set or clear a link fault, each stamped with a round.
// A version 1 reproduction applies every action as its round starts. A person acts at
// any moment of a round, also while it is stalled, so a recorded action carries gates
// (docs/reproduction-format.md, "When an action applies"): it waits for its round's
// consensus when its target's frame is in that consensus, for the deaths the recording
// saw before it, and for the time the person waited. Actions are applied in their
// recorded order wherever they touch the same ranks; an action waiting on a gate does
// not hold back actions on other ranks (a kill that must land before its rank deposits
// must not wait behind another rank's consensus).
import type { LinkFault } from '@shared/lab/contract';

export type FaultAction = 'kill-rank' | 'pause-rank' | 'resume-rank' | 'kill-host' | 'link-fault';
export interface Fault {
  action: FaultAction;
  /** Rank or host index (unused for link faults). */
  target: number;
  round: number;
  /** link-fault: which link and what (null clears). */
  link?: string;
  fault?: LinkFault | null;
  /**
   * Applied once the round's consensus is taken (the target's frame is in it), or once the target
   * has also adopted it ('adoption'), or once the round is over for every rank and the target has
   * sent its check of the adoption ('check': a rank checks once told the round is over), not as
   * the round starts.
   */
  after?: 'consensus' | 'adoption' | 'check';
  /** Applied once these ranks are dead (the recording saw them dead first). */
  afterDead?: number[];
  /** Applied this long after the previous action on the same ranks in this round (else after the round's start). */
  afterMs?: number;
}

export interface ScheduleContext {
  hostRanks: number[][];
  isDead(rank: number): boolean;
  /** Round r's consensus has been taken (the controller reduced it). */
  consensusTaken(round: number): boolean;
  /** The rank has adopted round r's consensus. */
  adopted(round: number, rank: number): boolean;
  /** The rank's check of its adoption of round r has come. */
  checked(round: number, rank: number): boolean;
  apply(f: Fault, round: number): void;
  /**
   * Longest afterMs wait: a paused rank the recording kept alive must not be declared dead
   * while the replay waits to resume it (half of the staleness less one heartbeat).
   */
  safeWaitMs: number;
  /** Longest wait, at a round's end, for a death the recording saw before an action. */
  deathWaitMs: number;
  /** Longest wait, once the round's end is cued, for a check the recording saw before an action. */
  checkWaitMs: number;
}

/** The ranks an action touches: its rank, its host's ranks, or the ranks behind its link. */
export function faultTargets(f: Fault, hostRanks: number[][]): number[] {
  if (f.action !== 'link-fault') return f.action === 'kill-host' ? (hostRanks[f.target] ?? []) : [f.target];
  const link = f.link ?? '';
  const rank = /^(?:h\d+\.)?r(\d+)\./.exec(link);
  if (rank) return [Number(rank[1])];
  const host = /^h(\d+)\.uplink\./.exec(link);
  return host ? (hostRanks[Number(host[1])] ?? []) : [];
}

export class FaultSchedule {
  private readonly pending: Fault[];
  private readonly roundT0 = new Map<number, number>();
  /** Per rank: when (and in which round) the last action touching it was applied. */
  private readonly lastApplied = new Map<number, { round: number; t: number }>();

  constructor(
    faults: readonly Fault[],
    private readonly ctx: ScheduleContext,
  ) {
    // Stable: actions of one round keep their recorded order.
    this.pending = [...faults].sort((a, b) => a.round - b.round);
  }

  roundStarted(round: number, t0: number): void {
    this.roundT0.set(round, t0);
  }

  /**
   * Actions of round `round` or earlier not applied yet; 'adopted': those that may be applied before
   * the ranks are told the round is over (the next is not gated on a check, which comes only after).
   */
  hasPending(round: number, stage: 'adopted' | 'cued' = 'cued'): boolean {
    const f = this.pending[0];
    return f !== undefined && f.round <= round && (stage === 'cued' || !this.waitsForCue(f, round));
  }

  /** An action of this round gated on its targets' checks, which they send once told the round is over. */
  private waitsForCue(f: Fault, round: number): boolean {
    return f.after === 'check' && f.round === round;
  }

  /**
   * Applies every action of rounds up to `round` whose gates hold (in recorded order per rank).
   * Returns the ms until a timed gate opens, or null when none waits on time (the others wait on
   * events the caller is woken by: the consensus, a death).
   */
  poll(round: number, now: number): number | null {
    const blocked = new Set<number>();
    let next: number | null = null;
    for (const f of [...this.pending]) {
      if (f.round > round) break;
      const targets = faultTargets(f, this.ctx.hostRanks);
      if (targets.some((t) => blocked.has(t))) continue;
      const wait = this.waitOf(f, round, now);
      if (wait <= 0) this.applyNow(f, targets, now);
      else {
        for (const t of targets) blocked.add(t);
        if (Number.isFinite(wait)) next = Math.min(next ?? wait, wait);
      }
    }
    return next;
  }

  /**
   * Round `round` is over: its remaining actions are applied now, in recorded order, each after
   * the deaths it waits for (at most deathWaitMs; `waitWhile` returns early on a stop, and
   * `stopped` then ends it). Stage 'adopted' (every rank has adopted, none is told yet) stops at
   * the first action gated on a check; stage 'cued' (the ranks are told) applies that one once
   * its live targets' checks have come (at most checkWaitMs), as the recording saw them.
   */
  async finishRound(
    round: number,
    waitWhile: (pending: () => boolean, ms: number) => Promise<void>,
    stopped: () => boolean = () => false,
    stage: 'adopted' | 'cued' = 'cued',
  ): Promise<void> {
    while (this.hasPending(round, stage)) {
      const f = this.pending[0];
      const dead = f.afterDead ?? [];
      await waitWhile(() => dead.some((r) => !this.ctx.isDead(r)), this.ctx.deathWaitMs);
      if (this.waitsForCue(f, round)) {
        const unchecked = (r: number) => !this.ctx.isDead(r) && !this.ctx.checked(round, r);
        const targets = faultTargets(f, this.ctx.hostRanks);
        await waitWhile(() => targets.some(unchecked), this.ctx.checkWaitMs);
      }
      // A stop during the wait ends the run: nothing more is applied to a cluster being torn down.
      if (stopped()) return;
      if (this.pending[0] !== f) continue;
      this.applyNow(f, faultTargets(f, this.ctx.hostRanks), performance.now());
    }
  }

  /** ms until `f` may be applied: 0 now, Infinity until an event. */
  private waitOf(f: Fault, round: number, now: number): number {
    const t0 = this.roundT0.get(f.round);
    if (t0 === undefined) return Infinity;
    // A round already over (a late action) waits for nothing but its deaths (finishRound).
    const late = f.round < round;
    if (!late && f.after && !this.ctx.consensusTaken(f.round)) return Infinity;
    // Its targets check only once told the round is over: finishRound applies it then.
    if (this.waitsForCue(f, round)) return Infinity;
    const adopting = (r: number) => !this.ctx.adopted(f.round, r) && !this.ctx.isDead(r);
    if (!late && f.after === 'adoption' && faultTargets(f, this.ctx.hostRanks).some(adopting))
      return Infinity;
    const dead = f.afterDead ?? [];
    if (dead.length > 0) return dead.every((r) => this.ctx.isDead(r)) ? 0 : Infinity;
    if (late || !f.afterMs) return 0;
    let from = t0;
    for (const r of faultTargets(f, this.ctx.hostRanks)) {
      const last = this.lastApplied.get(r);
      if (last && last.round === f.round) from = Math.max(from, last.t);
    }
    return from + Math.min(f.afterMs, this.ctx.safeWaitMs) - now;
  }

  private applyNow(f: Fault, targets: number[], now: number): void {
    this.pending.splice(this.pending.indexOf(f), 1);
    for (const t of targets) this.lastApplied.set(t, { round: f.round, t: now });
    this.ctx.apply(f, f.round);
  }
}
