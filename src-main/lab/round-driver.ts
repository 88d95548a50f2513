// (Longer than the usual 400 lines: pacing, the barrier watch and the verdict share one round's
// state; the verdict's recomputation is already apart in @shared/verdict. The next split: stall watch.)
// Paces rounds through the real control channel (the coordinator sends
// SyncNow to every live rank; lab ranks wait for it), waits for each round's
// consensus to reach every surviving rank, and checks it: the accepted ranks
// and their fold order come from the relays' folds (or the controller in
// forward/direct mode); the expected consensus is recomputed independently
// with flodl's arithmetic (@shared/verdict) and every rank's must equal it bit
// for bit, every element (through a digest of the frame it received).
import { createHash } from 'node:crypto';
import type { RankState } from '@shared/lab/state';
import type { Finding, RoundReport, UnitRecord } from '@shared/lab/records';
import type { Cluster } from '../engine/cluster';
import type { ControllerEvent } from '../engine/controller';
import type { RelayEvent } from '../engine/relay';
import { dtypeCode, modelLayout } from '@shared/synthetic';
import type { RankToParent } from '../rank/spec';
import { DEFAULT_SAMPLE_MAX, decodeSamples } from '../rank/samples';
import {
  compareAdoption,
  expectedConsensusSliced,
  sampleIndices,
  frameBodyChunks,
  type CheckResult,
  type Contribution,
  type Expected,
} from '@shared/verdict';
import { searchMergeOrder } from '@shared/verdict/order-search';
import { SLICE_BYTES, yieldToLoop } from '../engine/sliced';
import { STALL_HISTORY, stallThresholdMs } from './stall-threshold';
import { CHECK_WAIT_MS, PREPARED_WAIT_MS, RankReadiness } from './rank-readiness';
import { stallMessage } from '@shared/explain/findings';
import { RoundByteLedger } from '@shared/lab/round-bytes';
import { heartbeatMsOf } from '../engine/cluster';
import { FaultSchedule, type Fault } from './fault-schedule';

/**
 * SHA-256 (hex) of the chunks, a slice at a time with the event loop turning
 * in between: in one go, a 16 MiB model's digest held the engine's loop for
 * 50-120 ms every round (the relays', controller's and tap's sockets all wait).
 */
async function nodeSha256Sliced(chunks: Uint8Array[]): Promise<string> {
  const h = createHash('sha256');
  let since = 0;
  for (const c of chunks) {
    for (let o = 0; o < c.length; o += SLICE_BYTES) {
      const piece = c.subarray(o, Math.min(c.length, o + SLICE_BYTES));
      h.update(piece);
      since += piece.length;
      if (since >= SLICE_BYTES) {
        since = 0;
        await yieldToLoop();
      }
    }
  }
  return h.digest('hex');
}

export type { Fault, FaultAction } from './fault-schedule';

/** A rank's adoption and, once it has sent it, the lab's check of it (rank/spec.ts `checked`). */
type Adopted = Extract<RankToParent, { type: 'adopted' }> &
  Partial<Omit<Extract<RankToParent, { type: 'checked' }>, 'type'>>;
type FindingIn = Omit<Finding, 'id' | 't'>;

/**
 * How long a rank's death finding waits for the controller's DeclareDead
 * record to the rank's relay (the unit that evidences it); the controller
 * sends it on its next poll, so it normally comes within a few ms.
 */
const DECLARE_DEAD_WAIT_MS = 300;

export interface DriverEvents {
  round(report: RoundReport): void;
  finding(f: Omit<Finding, 'id' | 't'>): void;
  rankState(rank: number, state: RankState): void;
  log(level: 'info' | 'warn' | 'error', message: string): void;
}

/** Round reports a live session's driver keeps (between this and twice this). */
export const LIVE_REPORTS_KEPT = 64;

export class RoundDriver {
  round = 0;
  roundsCompleted = 0;
  readonly reports: RoundReport[] = [];
  readonly rankStates: RankState[];
  readonly rankRounds: number[];
  paused = false;
  intervalMs: number;
  ended: { reason: string; error: boolean } | null = null;
  private steps = 0;
  private readonly adopted = new Map<number, Map<number, Adopted>>();
  private readonly folded: Map<number, number[]>[] = [];
  private readonly controllerRounds = new Map<number, Extract<ControllerEvent, { type: 'round' }>>();
  private notify: (() => void) | null = null;
  private stopRequested = false;
  /** Death findings waiting for their DeclareDead record, and the DeclareDead records seen, by rank. */
  private readonly pendingDead = new Map<number, { f: FindingIn; timer: NodeJS.Timeout }>();
  private readonly declared = new Map<number, number | undefined>();
  private readonly readiness = new RankReadiness();
  /** Each data unit's bytes in the round it belongs to (the savings' figures; not the counters' deltas). */
  private readonly ledger = new RoundByteLedger();
  readonly faults: Fault[] = [];
  /** The faults, applied as their gates open (built when the rounds begin). */
  private schedule: FaultSchedule | null = null;
  /** When the round in progress sent its SyncNow (null between rounds): Record stamps actions with it. */
  roundStartedAt: number | null = null;
  /**
   * The round being judged (its end cued to the ranks, its report not out yet), else null: an
   * action Record stamps then came after the ranks' adoptions and, for some, their checks.
   */
  judging: number | null = null;

  constructor(
    private readonly cluster: Cluster,
    private readonly events: DriverEvents,
    /** The floor of the stall threshold (it grows with the recent round times). */
    private readonly stallMs = 1000,
  ) {
    this.intervalMs = cluster.config.roundIntervalMs;
    this.rankStates = Array.from({ length: cluster.world }, () => 'starting' as RankState);
    this.rankRounds = new Array<number>(cluster.world).fill(0);
    for (let h = 0; h < cluster.hostRanks.length; h++) this.folded.push(new Map());
    cluster.tap.onRecord((u) => this.ledger.unit(u, cluster.tap.getLink(u.link)?.info));
    cluster.controller.on((e) => this.onController(e));
    cluster.coordinator.on((e) => {
      if (e.type === 'stale')
        this.deadFinding(e.rank, {
          severity: 'warn',
          kind: 'dead',
          message: `rank ${e.rank} declared dead: no heartbeat for ${Math.round(e.silentMs)} ms`,
          ranks: [e.rank],
        });
      if (e.type === 'error')
        this.events.finding({
          severity: 'error',
          kind: e.code === 'HMAC_MISMATCH' ? 'hmac' : 'rejected',
          message: `coordinator: ${e.message}`,
          recordSeq: e.recordSeq,
        });
      this.kick();
    });
    cluster.dead.onDeath((rank, cause) => {
      // The coordinator declares every rank of a stopping session dead as it leaves: that is the
      // stop, not a death (a rank dead before the stop stays dead: setState never leaves 'dead').
      this.setState(rank, cluster.stopping ? 'exited' : 'dead');
      if (cause !== 'stale' && !cluster.stopping)
        this.deadFinding(rank, {
          severity: 'warn',
          kind: 'dead',
          message: `rank ${rank} declared dead (${cause})`,
          ranks: [rank],
        });
      this.kick();
    });
  }

  // ---- inputs from the cluster ----

  onRankMessage(rank: number, m: RankToParent): void {
    if (m.type === 'ready') this.setState(rank, 'alive');
    else if (m.type === 'adopted') {
      let byRank = this.adopted.get(m.round);
      if (!byRank) this.adopted.set(m.round, (byRank = new Map()));
      byRank.set(rank, { ...m });
      this.rankRounds[rank] = m.round + 1;
    } else if (m.type === 'checked') {
      const a = this.adopted.get(m.round)?.get(rank);
      if (a) Object.assign(a, { samples: m.samples, digest: m.digest, nonFinite: m.nonFinite });
    } else if (m.type === 'prepared') this.readiness.prepared(rank, m.round);
    else if (m.type === 'error' && !this.cluster.stopping)
      this.events.log('warn', `rank ${rank}: ${m.message}`);
    this.kick();
  }

  onRankExit(rank: number, code: number | null, signal: NodeJS.Signals | null): void {
    this.readiness.forget(rank);
    // A rank the stop ended (even one its grace period had to kill) exited; only a death before the stop is one.
    if (this.rankStates[rank] !== 'dead')
      this.setState(
        rank,
        !this.cluster.stopping && (this.cluster.dead.isDead(rank) || signal === 'SIGKILL')
          ? 'dead'
          : 'exited',
      );
    if (!this.cluster.stopping) {
      this.events.finding({
        severity: signal ? 'warn' : 'info',
        kind: 'exit',
        message: `rank ${rank} process exited (${signal ?? `code ${code}`})`,
        ranks: [rank],
      });
    }
    this.kick();
  }

  onRelayEvent(host: number, e: RelayEvent): void {
    if (e.type === 'folded') this.folded[host].set(e.round, e.order);
    if (e.type === 'error')
      this.events.finding({
        severity: 'error',
        kind: e.code === 'HMAC_MISMATCH' ? 'hmac' : 'rejected',
        message: `relay h${host} (${e.channel}): ${e.message}`,
        ranks: e.rank !== undefined ? [e.rank] : undefined,
        recordSeq: e.recordSeq,
      });
    if (e.type === 'dropped')
      this.events.finding({
        severity: 'info',
        kind: 'rejected',
        message: `relay h${host}: frame of rank ${e.rank} dropped: ${e.reason}`,
        ranks: [e.rank],
        recordSeq: e.recordSeq,
      });
    this.kick();
  }

  private onController(e: ControllerEvent): void {
    if (e.type === 'round') this.controllerRounds.set(e.round, e);
    if (e.type === 'shutdown') this.ended ??= { reason: e.reason, error: !!e.error };
    if (e.type === 'error')
      this.events.finding({
        severity: 'error',
        kind: e.code === 'HMAC_MISMATCH' ? 'hmac' : 'rejected',
        message: `controller: ${e.message}`,
        recordSeq: e.recordSeq,
      });
    if (e.type === 'declareDead') this.onDeclareDead(e.rank, e.recordSeq);
    this.kick();
  }

  /**
   * A rank's death finding points at the DeclareDead record that carries the
   * death to its relay. Where none will be sent (direct mode, the historical
   * build without forwarding) it goes out at once; otherwise it waits for the
   * record a short while, then goes out without it (e.g. the host's connection is gone).
   */
  private deadFinding(rank: number, f: FindingIn): void {
    const forwards = this.cluster.config.mode !== 'direct' && !this.cluster.config.historical?.noDeclareDead;
    if (!forwards) return this.events.finding(f);
    if (this.declared.has(rank)) return this.events.finding({ ...f, recordSeq: this.declared.get(rank) });
    const held = this.pendingDead.get(rank);
    if (held) {
      // A second finding for the same death (stale, then the cause): both wait for the one record.
      clearTimeout(held.timer);
      this.events.finding(held.f);
    }
    const timer = setTimeout(() => {
      this.pendingDead.delete(rank);
      this.events.finding(f);
    }, DECLARE_DEAD_WAIT_MS);
    this.pendingDead.set(rank, { f, timer });
  }

  private onDeclareDead(rank: number, recordSeq: number | undefined): void {
    this.declared.set(rank, recordSeq);
    const held = this.pendingDead.get(rank);
    if (!held) return;
    clearTimeout(held.timer);
    this.pendingDead.delete(rank);
    this.events.finding({ ...held.f, recordSeq });
  }

  /** Death findings still waiting for their record go out now (the session is stopping). */
  private flushPendingDead(): void {
    for (const [rank, held] of this.pendingDead) {
      clearTimeout(held.timer);
      this.pendingDead.delete(rank);
      this.events.finding(held.f);
    }
  }

  setState(rank: number, s: RankState): void {
    if (this.rankStates[rank] === s) return;
    if (this.rankStates[rank] === 'dead' && s !== 'dead') return;
    this.rankStates[rank] = s;
    this.events.rankState(rank, s);
  }

  // ---- pacing ----

  private kick(): void {
    const n = this.notify;
    this.notify = null;
    n?.();
  }

  private wait(ms?: number): Promise<void> {
    return new Promise((resolve) => {
      const t = ms === undefined ? null : setTimeout(() => this.kick(), ms);
      this.notify = () => {
        if (t) clearTimeout(t);
        resolve();
      };
    });
  }

  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
    this.kick();
  }
  step(): void {
    this.steps++;
    this.kick();
  }
  stop(): void {
    this.stopRequested = true;
    this.flushPendingDead();
    this.kick();
  }

  private isLive(rank: number): boolean {
    const s = this.rankStates[rank];
    return (
      !this.cluster.dead.isDead(rank) && s !== 'dead' && s !== 'exited' && !this.cluster.ranks[rank]?.exited
    );
  }

  /** Runs rounds until `maxRounds` (0 = forever), a stop, or the reduce ends. */
  async run(maxRounds: number): Promise<void> {
    // Epoch 0: each rank's share of a notional dataset, as the coordinator would plan it.
    const world = this.cluster.world;
    for (let r = 0; r < world; r++)
      this.cluster.coordinator.send(r, {
        type: 'StartEpoch',
        epoch: 0,
        partitionOffset: r * 1024,
        partitionSize: 1024,
      });
    this.schedule = this.newSchedule();
    while (!this.stopRequested && !this.ended && (maxRounds === 0 || this.round < maxRounds)) {
      while (this.paused && this.steps === 0 && !this.stopRequested) await this.wait();
      if (this.stopRequested) break;
      if (this.steps > 0) this.steps--;
      await this.runRound(this.round);
      if (this.ended) break;
      this.round++;
      if (this.intervalMs > 0 && !this.stopRequested) await this.sleep(this.intervalMs);
    }
  }

  private async sleep(ms: number): Promise<void> {
    await this.waitWhile(() => true, ms);
  }

  /** Waits while `pending()` holds, for at most `ms`, woken by every rank message (a stop ends it). */
  private async waitWhile(pending: () => boolean, ms: number): Promise<void> {
    const until = performance.now() + ms;
    while (!this.stopRequested && pending() && performance.now() < until)
      await this.wait(until - performance.now());
  }

  private newSchedule(): FaultSchedule {
    const cfg = this.cluster.config;
    return new FaultSchedule(this.faults, {
      hostRanks: this.cluster.hostRanks,
      isDead: (rank) => this.cluster.dead.isDead(rank) || this.rankStates[rank] === 'dead',
      consensusTaken: (round) => this.cluster.controller.round > round,
      adopted: (round, rank) => this.adopted.get(round)?.has(rank) ?? false,
      apply: (f, round) => this.applyFault(f, round),
      safeWaitMs: Math.max(0, (cfg.stalenessMs - heartbeatMsOf(cfg)) / 2),
      deathWaitMs: cfg.stalenessMs * 2 + 5000,
      checked: (round, rank) => this.adopted.get(round)?.get(rank)?.digest !== undefined,
      checkWaitMs: CHECK_WAIT_MS,
    });
  }

  private applyFault(f: Fault, round: number): void {
    this.events.finding({
      severity: 'info',
      kind: 'fault',
      message:
        f.action === 'link-fault'
          ? `fault: link ${f.link} ${JSON.stringify(f.fault)} at round ${round}`
          : `fault: ${f.action} ${f.target} at round ${round}`,
      ranks:
        f.action === 'link-fault'
          ? []
          : f.action === 'kill-host'
            ? this.cluster.hostRanks[f.target]
            : [f.target],
    });
    if (f.action === 'link-fault') this.cluster.setLinkFault(f.link!, f.fault ?? null);
    else if (f.action === 'kill-rank') this.cluster.rank(f.target).signal('SIGKILL');
    else if (f.action === 'pause-rank') {
      this.cluster.rank(f.target).signal('SIGSTOP');
      this.setState(f.target, 'paused');
    } else if (f.action === 'resume-rank') {
      // SIGCONT: as the window's Resume. A rank declared dead while paused stays out of the reduce.
      if (this.cluster.rank(f.target).signal('SIGCONT') && this.rankStates[f.target] === 'paused')
        this.setState(f.target, 'alive');
    } else this.cluster.killHost(f.target);
  }

  /** Called as each round begins, before its SyncNow (a sweep's warm-up boundary); stop() there ends the rounds before it. */
  onRoundStart: ((round: number) => void) | null = null;

  /** Waits (at most PREPARED_WAIT_MS) until every live rank that is not stopped has made round r's gradient. */
  private async untilPrepared(r: number): Promise<void> {
    const ranks = () =>
      this.cluster.hostRanks.flat().filter((x) => this.isLive(x) && !this.cluster.ranks[x]?.stopped);
    await this.waitWhile(
      () => !this.ended && this.readiness.lagging(r, ranks()).length > 0,
      PREPARED_WAIT_MS,
    );
  }

  /** The round is over for every surviving rank: each may make its next gradient now. */
  private cueRoundEnd(r: number): void {
    for (const x of this.cluster.hostRanks.flat())
      if (this.isLive(x)) this.cluster.ranks[x]?.send({ type: 'roundEnd', round: r });
  }

  /** Waits (at most CHECK_WAIT_MS) for the check of every adoption whose rank is still live. */
  private async untilChecked(adopted: Map<number, Adopted>): Promise<void> {
    await this.waitWhile(
      () => [...adopted].some(([rank, a]) => a.digest === undefined && this.isLive(rank)),
      CHECK_WAIT_MS,
    );
  }

  private async runRound(r: number): Promise<void> {
    await this.untilPrepared(r);
    if (this.stopRequested || this.ended) return;
    this.onRoundStart?.(r);
    // The hook may end the rounds here (a sweep's case is done): no SyncNow for this round.
    if (this.stopRequested) return;
    const t0 = performance.now();
    const stallMs = stallThresholdMs(
      this.stallMs,
      this.reports.slice(-STALL_HISTORY).map((x) => x.durationMs),
      this.intervalMs,
    );
    const upBefore = this.uplinkUp();
    const live = this.cluster.hostRanks.flat().filter((x) => this.isLive(x));
    this.cluster.coordinator.broadcast({ type: 'SyncNow' }, live);
    this.roundStartedAt = t0;
    const schedule = this.schedule ?? (this.schedule = this.newSchedule());
    schedule.roundStarted(r, t0);
    let stallReported = false;
    try {
      for (;;) {
        if (this.stopRequested || this.ended) return;
        const nextFault = schedule.poll(r, performance.now());
        const done = this.controllerRounds.get(r);
        const waiting = live.filter((x) => this.isLive(x) && !this.adopted.get(r)?.has(x));
        if (done && waiting.length === 0) {
          // The round is over: what the recording did in it before it ended is applied before the next.
          if (schedule.hasPending(r, 'adopted')) {
            await schedule.finishRound(
              r,
              (pending, ms) => this.waitWhile(pending, ms),
              () => this.stopRequested || this.ended !== null,
              'adopted',
            );
            continue;
          }
          this.cueRoundEnd(r);
          break;
        }
        const elapsed = performance.now() - t0;
        if (!stallReported && elapsed >= stallMs) {
          stallReported = true;
          // Before the consensus exists the fold barriers are waiting for deposits;
          // after it, the round waits for ranks that have not adopted it yet.
          const barrier = done ? [] : this.waitingFor();
          const names = barrier.length ? barrier : waiting;
          this.events.finding({
            recordSeq: this.lastRecordOf(names),
            severity: 'warn',
            kind: 'stalled',
            message: stallMessage(r, Boolean(done), names, elapsed),
            ranks: names,
            round: r,
          });
        }
        const stallWait = stallReported ? 500 : Math.max(1, stallMs - elapsed);
        await this.wait(Math.max(1, Math.min(stallWait, nextFault ?? Infinity)));
      }
    } finally {
      this.roundStartedAt = null;
    }
    const durationMs = performance.now() - t0;
    this.judging = r;
    try {
      // What the recording did once the round was over, after its targets' checks (fault-schedule.ts).
      await schedule.finishRound(
        r,
        (pending, ms) => this.waitWhile(pending, ms),
        () => this.stopRequested || this.ended !== null,
        'cued',
      );
      await this.finishRound(r, durationMs, upBefore);
    } finally {
      this.judging = null;
    }
  }

  /** Ranks whose check of round r's adoption has come (while the round is not yet reported). */
  checkedOf(r: number): number[] {
    return [...(this.adopted.get(r) ?? [])].filter(([, a]) => a.digest !== undefined).map(([rank]) => rank);
  }

  /** The seq of the newest unit a stalled round's missing ranks sent or got: on their data links, else any. */
  private lastRecordOf(ranks: number[]): number | undefined {
    if (ranks.length === 0) return undefined;
    const of = (r: UnitRecord) => r.rank !== undefined && ranks.includes(r.rank);
    return (
      this.cluster.tap.lastRecordWhere((r) => of(r) && r.link.endsWith('.data')) ??
      this.cluster.tap.lastRecordWhere(of)
    )?.seq;
  }

  /** Ranks the fold barriers are waiting for right now. */
  waitingFor(): number[] {
    const missing = new Set(this.cluster.controller.waitingFor());
    if (this.cluster.config.mode !== 'fold') return [...missing].sort((a, b) => a - b);
    // A host whose relay has started its barrier names the ranks it lacks; an external relay (which
    // says nothing) the ranks whose frames have not reached it; otherwise all its live ranks.
    const out: number[] = [];
    this.cluster.hostRanks.forEach((ranks, h) => {
      const lacking = ranks.filter((r) => missing.has(r));
      if (lacking.length === 0) return;
      const seen = this.cluster.observedOrder(h, this.round) ?? [];
      const inBarrier = this.cluster.relays[h]?.waitingFor() ?? lacking.filter((r) => !seen.includes(r));
      out.push(...(inBarrier.length > 0 ? inBarrier : lacking));
    });
    return out.sort((a, b) => a - b);
  }

  private async finishRound(r: number, durationMs: number, upBefore: number[]): Promise<void> {
    const c = this.controllerRounds.get(r)!;
    const idle = new Set(this.cluster.config.idleRanks ?? []);
    const contribution = (rank: number): Contribution => ({ rank, idle: idle.has(rank) });
    // The reduce order: per host the relay's merge order (fold), else the controller's rank order.
    let groups = c.order
      ? c.order.map((rank) => [contribution(rank)])
      : c.hosts.map((h) => this.foldOrder(h, r).map(contribution));
    const accepted = groups.flat().map((x) => x.rank);
    accepted.sort((a, b) => a - b);
    let verdict: RoundReport['verdict'] = 'unchecked';
    let maxRel = 0;
    let maxAbsErrorVsExactMean: number | undefined;
    let results: [number, CheckResult][] = [];
    const adopted = this.adopted.get(r) ?? new Map<number, Adopted>();
    if (adopted.size > 0) {
      // The recomputation runs while the ranks' checks come in.
      const first = this.expectedFor(r, groups);
      await this.untilChecked(adopted);
      let checked = this.compareAdoptions(await first, adopted);
      // An external relay does not say its merge order: when the observed one does not explain
      // the consensus, the order that does is looked for on the samples, then checked in full.
      const free = c.order ? [] : c.hosts.map((h) => this.cluster.relayCommand(h) !== null);
      if (free.some(Boolean) && checked.results.some(([, x]) => x.verdict !== 'ok')) {
        const recovered = this.recoverOrder(r, groups, free, adopted);
        if (recovered) {
          const again = this.compareAdoptions(await this.expectedFor(r, recovered), adopted);
          if (again.results.every(([, x]) => x.verdict === 'ok')) {
            groups = recovered;
            checked = again;
          }
        }
      }
      ({ results, maxRel, maxAbsErrorVsExactMean } = checked);
    }
    if (results.length > 0) verdict = results.every(([, x]) => x.verdict === 'ok') ? 'ok' : 'mismatch';
    for (const [rank, res] of results) {
      if (res.verdict !== 'ok')
        this.events.finding({
          severity: 'error',
          kind: 'mismatch',
          message: `round ${r}, rank ${rank}: ${res.message}`,
          ranks: [rank],
        });
    }
    // A poisoned consensus (e.g. 0 x NaN from an idle rank, WIRE.md 6.13) is named as such.
    const poisoned = [...(this.adopted.get(r) ?? [])].filter(([, a]) => (a.nonFinite ?? 0) > 0);
    if (poisoned.length > 0) {
      const [, a] = poisoned[0];
      this.events.finding({
        severity: 'error',
        kind: 'mismatch',
        message: `round ${r}: the consensus holds NaN/Inf (${a.nonFinite} of ${decodeSamples(a.samples ?? '').length} sampled elements) at rank(s) [${poisoned.map(([k]) => k).sort((x, y) => x - y)}]`,
        ranks: poisoned.map(([k]) => k),
      });
    }
    // The savings' K per host: the ranks whose frames each host's uplink carried into this round.
    const foldedPerHost = this.cluster.hostRanks.map((ranks, h) =>
      (this.cluster.config.mode === 'fold'
        ? [...this.foldOrder(h, r)]
        : ranks.filter((x) => accepted.includes(x))
      ).sort((a, b) => a - b),
    );
    // Every unit of the round is in: the HostFrame and RoundFrames it was reduced from came before the consensus.
    const bytes = this.ledger.take(r, this.cluster.hostRanks.length);
    // A session may run for hours: forget what this round no longer needs.
    this.adopted.delete(r);
    this.controllerRounds.delete(r);
    for (const m of this.folded) m.delete(r);
    // A live session (rounds = 0) runs for as long as the window is open: its reports live on in
    // the window and the session's trace; the driver needs only the recent ones (the stall
    // threshold's STALL_HISTORY). 10,000 kept grew the engine by ~15 MB over 80 minutes.
    if (this.cluster.config.rounds === 0 && this.reports.length >= 2 * LIVE_REPORTS_KEPT)
      this.reports.splice(0, this.reports.length - LIVE_REPORTS_KEPT);
    const upAfter = this.uplinkUp();
    // SHA-256 of the consensus frame the ranks adopted (footer excluded, so salt-free); the lowest
    // rank's when they differ. With a verdict of ok it equals the recomputed expectation's digest.
    const adoptedDigests = [...adopted]
      .sort(([a], [b]) => a - b)
      .flatMap(([, a]) => (a.digest !== undefined ? [a.digest] : []));
    const report: RoundReport = {
      round: r,
      accepted,
      mergeOrder: groups.map((g) => g.map((x) => x.rank)),
      consensusSha256: adoptedDigests[0],
      verdict,
      maxRelError: maxRel,
      maxAbsErrorVsExactMean,
      groups: groups.map((g) => g.map((x) => x.rank)),
      adopted: [...adopted]
        .map(([rank, a]) => ({ rank, weight: a.weight, digest: a.digest ?? '' }))
        .sort((x, y) => x.rank - y.rank),
      durationMs,
      uplinkBytesPerHost: upAfter.map((v, h) => v - (upBefore[h] ?? 0)),
      foldedPerHost,
      dataUpBytesPerHost: bytes.hostUp,
      rankDataUpBytes: foldedPerHost.map((ranks) => ranks.map((x) => bytes.rankUp.get(x) ?? 0)),
    };
    this.reports.push(report);
    if (results.length > 0) this.roundsCompleted++;
    this.events.round(report);
  }

  /** Round r's consensus recomputed under `groups`, every element, and its digest. */
  private async expectedFor(r: number, groups: Contribution[][]): Promise<Expected> {
    const cfg = this.cluster.config;
    // In slices: a model-sized recomputation must not stall the sockets and timers of this process.
    const recomputed = await expectedConsensusSliced(
      {
        seed: cfg.seed,
        round: r,
        dtype: dtypeCode(cfg.dtype),
        layout: modelLayout(cfg.modelBytes, cfg.shapes),
        groups,
      },
      yieldToLoop,
    );
    return { ...recomputed, digest: await nodeSha256Sliced(frameBodyChunks(recomputed.frame)) };
  }

  /** Every surviving rank's adoption compared with the recomputation. */
  private compareAdoptions(
    expected: Expected,
    adopted: Map<number, Adopted>,
  ): { results: [number, CheckResult][]; maxRel: number; maxAbsErrorVsExactMean: number } {
    const results: [number, CheckResult][] = [];
    let maxRel = 0;
    // The samples only explain a digest that differs: decoded for such an adoption alone
    // (a model-sized round decoded 4,096 samples per rank for nothing, most of its garbage).
    let indices: number[] | null = null;
    for (const [rank, a] of adopted) {
      // A rank that left before its check: its adoption is counted, not compared.
      if (a.digest === undefined || a.samples === undefined) continue;
      const values = a.digest === expected.digest ? [] : decodeSamples(a.samples);
      if (values.length > 0) indices ??= this.sampleIndices();
      const res = compareAdoption(expected, {
        weight: a.weight,
        digest: a.digest,
        indices: indices ? indices.slice(0, values.length) : [],
        values,
      });
      results.push([rank, res]);
      maxRel = Math.max(maxRel, res.maxRelError);
    }
    return { results, maxRel, maxAbsErrorVsExactMean: expected.maxAbsErrorVsExactMean };
  }

  private sampleIndices(): number[] {
    const cfg = this.cluster.config;
    return sampleIndices(modelLayout(cfg.modelBytes, cfg.shapes).numel, cfg.sampleMax ?? DEFAULT_SAMPLE_MAX);
  }

  /** The merge order that explains the adopted samples (external relays' hosts permuted), or null. */
  private recoverOrder(
    r: number,
    groups: Contribution[][],
    free: boolean[],
    adopted: Map<number, Adopted>,
  ): Contribution[][] | null {
    const a = [...adopted.values()].find((x) => x.samples !== undefined);
    if (!a?.samples) return null;
    const values = decodeSamples(a.samples);
    const cfg = this.cluster.config;
    return searchMergeOrder({
      seed: cfg.seed,
      round: r,
      dtype: dtypeCode(cfg.dtype),
      groups,
      free,
      indices: this.sampleIndices().slice(0, values.length),
      values,
    });
  }

  /**
   * Host h's merge order in round r: its relay's own account, or for an external relay (which
   * reports nothing) the order its ranks' frames reached it through the lab's loopback tap.
   */
  private foldOrder(h: number, r: number): number[] {
    const own = this.folded[h]?.get(r);
    if (own) return own;
    const seen = this.cluster.observedOrder(h, r);
    if (!seen) return [];
    // A rank declared dead before the fold is not in it (the relay's barrier let it go).
    return seen.filter((x) => this.cluster.hostOf(x) === h);
  }

  /** bytesUp summed over each host's links to the controller (both channels). */
  uplinkUp(): number[] {
    const out = new Array<number>(this.cluster.hostRanks.length).fill(0);
    for (const l of this.cluster.tap.linkViews())
      if (l.kind === 'uplink' && l.host >= 0 && l.host < out.length) out[l.host] += l.bytesUp;
    return out;
  }
}
