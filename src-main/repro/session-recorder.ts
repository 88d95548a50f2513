// The window's Record: the live session's topology-changing actions (kill,
// pause and resume a rank, kill a host, set or clear a link fault), in the
// order the person took them, each stamped with where the rounds were (the
// round, how far into it, the ranks dead then), and its round reports, so
// "Save reproduction" can write a file whose schedule is what the person did
// and whose expectations are what happened. A person acts at any moment of a
// round, also while it is stalled, so each action gets the gates that make a
// replay do the same (docs/reproduction-format.md, "When an action applies").
// A file replays from round 0, so every action since the session's start is
// kept, also those before Record was pressed (the file says from which round
// Record ran, and why the rounds before it run too).
import type { LabBatch, LabCommand } from '@shared/lab/contract';
import type { RoundReport } from '@shared/lab/records';
import type { SessionSnapshot } from '@shared/lab/state';
import { ranksOfHosts } from '@shared/lab/topology';
import {
  REPRO_FORMAT,
  REPRO_VERSION,
  type Repro,
  type ReproAction,
  type ReproRecordingState,
} from '@shared/repro';

/** Round reports kept for the expectations (a file of more rounds keeps the first ones judged). */
const MAX_ROUNDS = 5000;

/** Where the rounds were when a command ran (TopologySession.actionStamp). */
export interface ActionStamp {
  /** The round in progress, or the next one between rounds. */
  round: number;
  /** ms since the round's SyncNow; absent between rounds. */
  atMs?: number;
  /** performance.now() when the command ran. */
  t: number;
  /** Ranks dead then. */
  dead: number[];
  /**
   * Present between a round's end and its report (the driver judging it): the ranks whose check
   * of their adoption had come, which a rank sends once told the round is over.
   */
  checked?: number[];
}

interface Taken {
  action: ReproAction;
  stamp: ActionStamp;
}

export class ReproRecorder {
  private taken: Taken[] = [];
  private reports: RoundReport[] = [];
  private snapshotAtStart: SessionSnapshot | null = null;
  private on = false;
  private fromRound = 0;
  /** Ranks dead as the session's events tell so far, and as they stood at the last kept round report. */
  private deadNow = new Set<number>();
  private deadAtLastReport: number[] = [];

  /** A new live topology: what was captured belongs to the previous one. */
  begin(snapshot: SessionSnapshot): void {
    this.snapshotAtStart = snapshot;
    this.taken = [];
    this.reports = [];
    this.fromRound = 0;
    this.deadNow = new Set();
    this.deadAtLastReport = [];
  }

  /** The live session's events: its round reports and, from its snapshots, its dead ranks. */
  observe(b: LabBatch): void {
    for (const e of b.events)
      if (e.type === 'snapshot')
        for (const r of e.snapshot.ranks) {
          if (r.state === 'dead') this.deadNow.add(r.rank);
        }
      else if (e.type === 'round' && this.reports.length < MAX_ROUNDS) {
        this.reports.push(e.report);
        this.deadAtLastReport = [...this.deadNow];
      }
  }

  /** An accepted command of the live session, with where the rounds were when it ran. */
  command(cmd: LabCommand, stamp: ActionStamp): void {
    const a = actionOf(cmd, stamp.round);
    if (a)
      this.taken.push({
        action: a,
        stamp: { ...stamp, dead: [...stamp.dead] },
      });
  }

  setOn(on: boolean, round: number): ReproRecordingState {
    if (on && !this.on) this.fromRound = round;
    this.on = on;
    return this.state();
  }

  state(): ReproRecordingState {
    return {
      on: this.on,
      actions: this.taken.length,
      rounds: this.reports.length,
      fromRound: this.fromRound,
    };
  }

  /**
   * The file: the topology as started, the actions of the rounds reported so far with their gates,
   * and those rounds with their verdicts, digests and merge orders (the replay enforces them), the
   * verdict a replay of them reaches and the dead set they left. A round still in progress when the
   * file is drafted is left out, with its actions: a replay judges whole rounds.
   */
  draft(): Repro {
    const snap = this.snapshotAtStart;
    if (!snap)
      throw Object.assign(new Error('nothing recorded: start a topology first'), { code: 'NO_SESSION' });
    const reports = [...this.reports].sort((a, b) => a.round - b.round);
    const rounds = reports.length > 0 ? reports.at(-1)!.round + 1 : 0;
    const c = snap.config;
    const hostRanks = ranksOfHosts(c.ranksPerHost);
    const kept = this.taken.filter((x) => x.action.round < rounds);
    const left = this.taken.length - kept.length;
    const schedule = gated(kept, reports, hostRanks);
    // A kill's exit may be reported after its round: the replay waits for it (runTopology), so it is dead there.
    const dead = new Set(this.deadAtLastReport);
    for (const a of schedule)
      if (a.action === 'kill-rank') dead.add(a.rank);
      else if (a.action === 'kill-host') for (const r of hostRanks[a.host] ?? []) dead.add(r);
    const checked = reports.filter((r) => r.verdict !== 'unchecked').length;
    const verdict = reports.some((r) => r.verdict === 'mismatch')
      ? ('mismatch' as const)
      : checked < rounds
        ? ('incomplete' as const)
        : ('ok' as const);
    const notes = [
      `Recorded in the window from round ${this.fromRound}: a replay runs from round 0, because the cluster numbers its rounds from 0 and round ${this.fromRound}'s dead set and consensus are what the rounds before it (and ${this.taken.filter((x) => x.stamp.round < this.fromRound).length} action(s) taken before Record) left behind.`,
      `${kept.length} action(s) in their order, ${reports.length} round(s) reported.`,
      left > 0
        ? `${left} action(s) taken in round ${rounds}, which had not ended when the file was drafted, are left out: a replay judges whole rounds.`
        : '',
      'Edit the expectations freely.',
    ];
    return {
      format: REPRO_FORMAT,
      version: REPRO_VERSION,
      name: `recorded ${c.ranksPerHost.join(',')} ${c.mode}`,
      description: notes.filter(Boolean).join(' '),
      recordedFrom: this.fromRound,
      topology: {
        ranksPerHost: [...c.ranksPerHost],
        mode: c.mode,
        policy: c.policy,
        dtype: c.dtype,
        modelBytes: c.modelBytes,
        seed: c.seed,
        saltHex: snap.saltHex,
        stalenessMs: c.stalenessMs,
        controlIndexTable: c.controlIndexTable,
        intervalMs: 0,
        rounds: Math.max(rounds, 1),
      },
      timeoutMs: 120_000,
      schedule,
      expectations: {
        ...(reports.length ? { verdict } : {}),
        rounds: reports.map((r) => ({
          round: r.round,
          verdict: r.verdict,
          ...(r.consensusSha256 ? { consensusSha256: r.consensusSha256 } : {}),
          ...(r.mergeOrder ? { mergeOrder: r.mergeOrder.map((g) => [...g]) } : {}),
        })),
        dead: [...dead].sort((a, b) => a - b),
      },
    };
  }
}

/** The ranks an action touches (its rank, its host's ranks, the ranks behind its link). */
function targetsOf(a: ReproAction, hostRanks: number[][]): number[] {
  switch (a.action) {
    case 'kill-rank':
    case 'pause-rank':
    case 'resume-rank':
      return [a.rank];
    case 'kill-host':
      return hostRanks[a.host] ?? [];
    case 'link-fault':
    case 'clear-link-fault': {
      const rank = /^(?:h\d+\.)?r(\d+)\./.exec(a.link);
      if (rank) return [Number(rank[1])];
      const host = /^h(\d+)\.uplink\./.exec(a.link);
      return host ? (hostRanks[Number(host[1])] ?? []) : [];
    }
  }
}

/**
 * Each action with the gates that make a replay do what the person did (types.ts ActionGates):
 * - a kill, pause, kill host or fault set whose target's frame is in its round's consensus waits
 *   for that consensus (the person acted after the deposit), and for the target's adoption of it
 *   when the target adopted it in the recording, and for the target's check of that adoption when the
 *   action came after it (the round over, being judged); otherwise it lands as the round starts,
 *   before the target can deposit (the person acted before it, or it never came);
 * - a resume or a fault cleared waits for the deaths of its targets the recording saw first,
 *   else as long as the person waited since the last action on the same target in that round.
 */
function gated(taken: Taken[], reports: RoundReport[], hostRanks: number[][]): ReproAction[] {
  const byRound = new Map(reports.map((r) => [r.round, r]));
  return taken.map(({ action, stamp }, i) => {
    const targets = targetsOf(action, hostRanks);
    const out: ReproAction = { ...action };
    if (stamp.atMs !== undefined) out.atMs = Math.round(stamp.atMs);
    const undo = action.action === 'resume-rank' || action.action === 'clear-link-fault';
    if (!undo) {
      const accepted = byRound.get(action.round)?.accepted ?? [];
      if (targets.some((r) => accepted.includes(r))) {
        // Did its live targets adopt the round in the recording? Then the action waits for their
        // adoption: applied before it, a pause would hold this round, which the recording finished
        // (what the stamp saw of the adoptions can lag the rank's IPC; the round report cannot).
        const adopted = byRound.get(action.round)?.adopted?.map((x) => x.rank) ?? [];
        const live = targets.filter((r) => !stamp.dead.includes(r));
        // An adoption the report shows can have come after the action: when the action was undone
        // in its own round before that round ended (a pause resumed while the round waited for the
        // paused rank's adoption), the rank adopted only once resumed. The action then came before
        // the adoption and waits only for the consensus, so the replay's round waits as the
        // recording's did (gated on the adoption, the pause landed after it and the resume came
        // 1 ms later: a round held 2.5 s replayed in 0.4 s).
        const end = byRound.get(action.round)?.durationMs ?? -Infinity;
        const undoneBeforeEnd = taken
          .slice(i + 1)
          .some(
            (u) =>
              u.action.round === action.round &&
              undoes(u.action, action) &&
              u.stamp.atMs !== undefined &&
              u.stamp.atMs <= end,
          );
        out.after =
          live.length > 0 && live.every((r) => adopted.includes(r)) && !undoneBeforeEnd
            ? // Taken while the round was judged, after the targets' checks: a rank checks once told
              // the round is over, so gated on the adoption alone a pause landed before the check,
              // and the verdict waited its 2 s for it (pause to resume 4.1 s replayed, 2.5 s recorded).
              live.every((r) => stamp.checked?.includes(r))
              ? 'check'
              : 'adoption'
            : 'consensus';
      }
      return out;
    }
    const dead = targets.filter((r) => stamp.dead.includes(r));
    if (dead.length > 0) {
      out.afterDead = dead;
      return out;
    }
    // The previous action on the same ranks in this round, else the round's start.
    let from = stamp.atMs !== undefined ? stamp.t - stamp.atMs : undefined;
    for (let j = i - 1; j >= 0; j--) {
      const p = taken[j];
      if (p.action.round !== action.round) break;
      if (targetsOf(p.action, hostRanks).some((r) => targets.includes(r))) {
        from = p.stamp.t;
        break;
      }
    }
    if (from !== undefined && stamp.t > from) out.afterMs = Math.round(stamp.t - from);
    return out;
  });
}

/** `u` undoes `a`: a resume of the rank `a` paused, or the clearing of the link `a` faulted. */
function undoes(u: ReproAction, a: ReproAction): boolean {
  if (a.action === 'pause-rank') return u.action === 'resume-rank' && u.rank === a.rank;
  if (a.action === 'link-fault') return u.action === 'clear-link-fault' && u.link === a.link;
  return false;
}

function actionOf(cmd: LabCommand, round: number): ReproAction | null {
  switch (cmd.type) {
    case 'killRank':
      return { round, action: 'kill-rank', rank: cmd.rank };
    case 'pauseRank':
      return { round, action: 'pause-rank', rank: cmd.rank };
    case 'resumeRank':
      return { round, action: 'resume-rank', rank: cmd.rank };
    case 'killHost':
      return { round, action: 'kill-host', host: cmd.host };
    case 'setLinkFault':
      return cmd.fault
        ? { round, action: 'link-fault', link: cmd.link, fault: { ...cmd.fault } }
        : { round, action: 'clear-link-fault', link: cmd.link };
    default:
      return null;
  }
}
