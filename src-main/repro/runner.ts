// Replays a reproduction file headless on real processes (runTopology: a real
// controller, relays and rank processes on loopback), then judges it; and the
// way back: the file that reproduces a run given by its config and schedule.
import { DEFAULT_TOPOLOGY, type TopologyConfig } from '@shared/lab/topology';
import {
  checkExpectations,
  REPRO_FORMAT,
  REPRO_VERSION,
  type ExpectationResult,
  type Repro,
  type ReproAction,
} from '@shared/repro';
import { runTopology, type RunReport } from '../lab/run-topology';
import type { Fault } from '../lab/round-driver';
import type { TopologySession } from '../lab/topology-session';
import { identifyRelayCommand } from '../engine/external-relay';

export function reproConfig(r: Repro): TopologyConfig {
  const t = r.topology;
  return {
    ...DEFAULT_TOPOLOGY,
    ranksPerHost: [...t.ranksPerHost],
    mode: t.mode,
    policy: t.policy,
    dtype: t.dtype,
    modelBytes: t.modelBytes,
    seed: t.seed,
    saltHex: t.saltHex,
    stalenessMs: t.stalenessMs,
    roundIntervalMs: t.intervalMs,
    rounds: t.rounds,
    controlIndexTable: t.controlIndexTable,
    ...(t.relays && t.relays.length > 0
      ? {
          relayCommands: t.ranksPerHost.map((_, h) => t.relays?.find((x) => x.host === h)?.command ?? null),
        }
      : {}),
  };
}

/**
 * Before a replay: each external relay's program as it resolves now against the one the file
 * recorded. A line per relay whose program differs (or cannot be found), naming host, command
 * and both SHA-256: the replay runs another relay than the recorded run did.
 */
export function reproRelayNotices(r: Repro): string[] {
  const out: string[] = [];
  for (const rec of r.topology.relays ?? []) {
    const now = identifyRelayCommand(rec.host, rec.command);
    if (now.sha256 === rec.sha256) continue;
    out.push(
      now.sha256 === null
        ? `relay h${rec.host} (command '${rec.command}'): its program is not found now; the file recorded SHA-256 ${rec.sha256 ?? 'none'}`
        : `relay h${rec.host} (command '${rec.command}'): a different executable: ${now.program} has SHA-256 ${now.sha256}, the file recorded ${rec.sha256 ?? 'none (not found then)'}`,
    );
  }
  return out;
}

/** The file's schedule as the run's faults, in the file's order, with their gates (fault-schedule.ts). */
export function reproFaults(r: Repro): Fault[] {
  return r.schedule.map((a): Fault => {
    const gates: Pick<Fault, 'after' | 'afterDead' | 'afterMs'> = {
      ...(a.after ? { after: a.after } : {}),
      ...(a.afterDead?.length ? { afterDead: [...a.afterDead] } : {}),
      ...(a.afterMs !== undefined ? { afterMs: a.afterMs } : {}),
    };
    switch (a.action) {
      case 'kill-rank':
      case 'pause-rank':
      case 'resume-rank':
        return { action: a.action, target: a.rank, round: a.round, ...gates };
      case 'kill-host':
        return { action: 'kill-host', target: a.host, round: a.round, ...gates };
      case 'link-fault':
        return {
          action: 'link-fault',
          target: -1,
          round: a.round,
          link: a.link,
          fault: { ...a.fault },
          ...gates,
        };
      case 'clear-link-fault':
        return { action: 'link-fault', target: -1, round: a.round, link: a.link, fault: null, ...gates };
    }
  });
}

/**
 * The saved run's merge order per round, enforced on replay (the relays' folds
 * and the controller's reduce sum in it), so a topology whose folds sum 3+
 * terms replays bit for bit too. Absent when the file records none.
 */
export function reproMergeOrders(r: Repro): (number[][] | undefined)[] | undefined {
  const rounds = r.expectations.rounds ?? [];
  if (!rounds.some((x) => x.mergeOrder)) return undefined;
  const out: (number[][] | undefined)[] = [];
  for (const x of rounds) if (x.mergeOrder) out[x.round] = x.mergeOrder.map((g) => [...g]);
  return out;
}

export interface ReproRun {
  report: RunReport;
  results: ExpectationResult[];
  held: boolean;
}

export async function runRepro(
  repro: Repro,
  opts: {
    snapLen?: number;
    onSession?: (s: TopologySession) => void;
    onRoundsStart?: (s: TopologySession) => void;
    onExternalRelayLine?: (host: number, stream: 'stdout' | 'stderr', line: string) => void;
  } = {},
): Promise<ReproRun> {
  const report = await runTopology(reproConfig(repro), {
    faults: reproFaults(repro),
    extra: { mergeOrders: reproMergeOrders(repro) },
    maxMs: repro.timeoutMs,
    snapLen: opts.snapLen ?? 0,
    onSession: opts.onSession,
    onRoundsStart: opts.onRoundsStart,
    onExternalRelayLine: opts.onExternalRelayLine,
  });
  const results = checkExpectations(repro, report);
  return { report, results, held: results.every((x) => x.ok) };
}

function actionOf(f: Fault): ReproAction {
  switch (f.action) {
    case 'kill-rank':
    case 'pause-rank':
    case 'resume-rank':
      return { round: f.round, action: f.action, rank: f.target };
    case 'kill-host':
      return { round: f.round, action: 'kill-host', host: f.target };
    case 'link-fault':
      return f.fault
        ? { round: f.round, action: 'link-fault', link: f.link!, fault: { ...f.fault } }
        : { round: f.round, action: 'clear-link-fault', link: f.link! };
  }
}

/**
 * The file that reproduces a run: its topology and schedule, with expectations
 * taken from what happened (verdicts, consensusSha256 per round, dead set).
 * The salt is kept so the replay's wire bytes match too (the consensus digests do not depend on it).
 */
/**
 * Whether some round sums 3+ terms in one fold (a relay's ranks or the controller's host frames):
 * its bytes then depend on arrival order, as in flodl, and a replay may differ bit-wise.
 */
export function orderSensitive(report: RunReport): boolean {
  return report.rounds.some(
    (r) => (r.mergeOrder ?? []).length > 2 || (r.mergeOrder ?? []).some((g) => g.length > 2),
  );
}

export function reproFromRun(
  config: TopologyConfig,
  faults: Fault[],
  report: RunReport,
  timeoutMs?: number,
): Repro {
  const repro: Repro = {
    format: REPRO_FORMAT,
    version: REPRO_VERSION,
    name: `run ${config.ranksPerHost.join(',')} ${config.mode}`,
    topology: {
      ranksPerHost: [...config.ranksPerHost],
      mode: config.mode,
      policy: config.policy,
      dtype: config.dtype,
      modelBytes: config.modelBytes,
      seed: config.seed,
      saltHex: report.saltHex,
      stalenessMs: config.stalenessMs,
      intervalMs: config.roundIntervalMs,
      rounds: config.rounds,
      controlIndexTable: config.controlIndexTable,
      ...(config.relayCommands?.some((c) => c !== null)
        ? {
            relays: config.relayCommands.flatMap((command, host) => {
              if (command === null) return [];
              const id = identifyRelayCommand(host, command);
              return [{ host, command, sha256: id.sha256 }];
            }),
          }
        : {}),
    },
    schedule: [...faults].sort((a, b) => a.round - b.round).map(actionOf),
    expectations: {
      verdict: report.verdict,
      roundsCompleted: report.roundsCompleted,
      rounds: report.rounds.map((r) => ({
        round: r.round,
        verdict: r.verdict,
        ...(r.consensusSha256 ? { consensusSha256: r.consensusSha256 } : {}),
        ...(r.mergeOrder ? { mergeOrder: r.mergeOrder.map((g) => [...g]) } : {}),
      })),
      dead: [...report.dead].sort((a, b) => a - b),
    },
  };
  if (timeoutMs !== undefined) repro.timeoutMs = timeoutMs;
  return repro;
}
