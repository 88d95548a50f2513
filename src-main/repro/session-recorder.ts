// The window's Record: the live session's topology-changing actions (kill,
// pause and resume a rank, kill a host, set or clear a link fault), each
// stamped with the round the session was on, and its round reports, so
// "Save reproduction" can write a file whose schedule is what the person did
// and whose expectations are what happened. A file replays from round 0, so
// every action since the session's start is kept, also those before Record
// was pressed (Record says how many rounds had passed).
import type { LabBatch, LabCommand } from '@shared/lab/contract';
import type { RoundReport } from '@shared/lab/records';
import type { SessionSnapshot } from '@shared/lab/state';
import {
  REPRO_FORMAT,
  REPRO_VERSION,
  type Repro,
  type ReproAction,
  type ReproRecordingState,
} from '@shared/repro';

/** Round reports kept for the expectations (a file of more rounds keeps the first ones judged). */
const MAX_ROUNDS = 5000;

export class ReproRecorder {
  private actions: ReproAction[] = [];
  private reports: RoundReport[] = [];
  private snapshotAtStart: SessionSnapshot | null = null;
  private on = false;
  private fromRound = 0;

  /** A new live topology: what was captured belongs to the previous one. */
  begin(snapshot: SessionSnapshot): void {
    this.snapshotAtStart = snapshot;
    this.actions = [];
    this.reports = [];
    this.fromRound = 0;
  }

  /** The live session's events (its round reports). */
  observe(b: LabBatch): void {
    for (const e of b.events)
      if (e.type === 'round' && this.reports.length < MAX_ROUNDS) this.reports.push(e.report);
  }

  /** An accepted command of the live session, at the round the session is on. */
  command(cmd: LabCommand, round: number): void {
    const a = actionOf(cmd, round);
    if (a) this.actions.push(a);
  }

  setOn(on: boolean, round: number): ReproRecordingState {
    if (on && !this.on) this.fromRound = round;
    this.on = on;
    return this.state();
  }

  state(): ReproRecordingState {
    return {
      on: this.on,
      actions: this.actions.length,
      rounds: this.reports.length,
      fromRound: this.fromRound,
    };
  }

  /**
   * The file: the topology as started, the actions, and the rounds reported so far with
   * their verdicts, digests and merge orders (the replay enforces them), and the dead set.
   */
  draft(dead: number[]): Repro {
    const snap = this.snapshotAtStart;
    if (!snap)
      throw Object.assign(new Error('nothing recorded: start a topology first'), { code: 'NO_SESSION' });
    const reports = [...this.reports].sort((a, b) => a.round - b.round);
    const rounds = reports.length > 0 ? reports.at(-1)!.round + 1 : 1;
    const c = snap.config;
    const schedule = this.actions.map((a) => landed(a, reports)).sort((a, b) => a.round - b.round);
    const lastAction = schedule.reduce((m, a) => Math.max(m, a.round), 0);
    return {
      format: REPRO_FORMAT,
      version: REPRO_VERSION,
      name: `recorded ${c.ranksPerHost.join(',')} ${c.mode}`,
      description: `Recorded in the window from round ${this.fromRound}; ${this.actions.length} action(s) since the session's start, ${reports.length} round(s) reported. Edit the expectations freely.`,
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
        rounds: Math.max(rounds, lastAction + 1),
      },
      timeoutMs: 120_000,
      schedule,
      expectations: {
        ...(reports.length && reports.every((r) => r.verdict === 'ok') ? { verdict: 'ok' as const } : {}),
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

/**
 * The round an action took effect in. A replay applies it as its round starts; a person acts
 * at any moment of a round, so a kill during round r whose rank had already deposited (its
 * frame is in round r's consensus) took effect from round r + 1 on.
 */
function landed(a: ReproAction, reports: RoundReport[]): ReproAction {
  const ranks = a.action === 'kill-rank' || a.action === 'pause-rank' ? [a.rank] : null;
  const report = reports.find((r) => r.round === a.round);
  if (!report) return a;
  if (ranks && ranks.some((r) => report.accepted.includes(r))) return { ...a, round: a.round + 1 };
  if (a.action === 'kill-host' && (report.foldedPerHost?.[a.host]?.length ?? 0) > 0)
    return { ...a, round: a.round + 1 };
  return a;
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
