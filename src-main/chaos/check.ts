// The independent checks of one chaos run, from its `run --json` report and
// what the runner saw of its processes. The consensus of every round is
// recomputed here from the ranks' known contributions (@shared/synthetic)
// with flodl's arithmetic (@shared/verdict) in the reduce order the report
// names, and every delivered copy's digest must equal it bit for bit; the
// engine's own verdict is not trusted.
import { createHash } from 'node:crypto';
import { dtypeCode, modelLayout } from '@shared/synthetic';
import { expectedConsensus, withDigest, type ChunkDigest } from '@shared/verdict';
import type { RoundReport } from '@shared/lab/records';
import type { ChaosCase } from './generate';

export type FailureKind =
  | 'wrong-consensus'
  | 'undelivered'
  | 'unexpected-death'
  | 'missed-death'
  | 'incomplete'
  | 'hang'
  | 'orphan'
  | 'crash';

export interface Failure {
  kind: FailureKind;
  message: string;
}

/** The parts of `run --json` the checks read. */
export interface RunReportView {
  roundsRequested: number;
  roundsCompleted: number;
  rounds: RoundReport[];
  dead: number[];
  ended: string;
  verdict: string;
  modelBytes: number;
  dtype: 'f32' | 'bf16';
  seed: number;
}

export interface RunObservation {
  /** The parsed report, or null when the run printed none. */
  report: RunReportView | null;
  exitCode: number | null;
  signal: string | null;
  /** True when the per-case wall-clock bound was hit and the run was killed. */
  hung: boolean;
  /** Processes of the run still alive after it ended (pid and command). */
  orphans: { pid: number; cmd: string }[];
  stderrTail: string;
}

export interface CaseResult {
  index: number;
  runArgs: string[];
  rounds: number;
  roundsChecked: number;
  failures: Failure[];
  ms: number;
}

const nodeSha256: ChunkDigest = (chunks) => {
  const h = createHash('sha256');
  for (const c of chunks) h.update(c);
  return h.digest('hex');
};

/** Checks one round; returns its failures. */
export function checkRound(
  c: ChaosCase,
  report: RunReportView,
  r: RoundReport,
  dead: Set<number>,
): Failure[] {
  const out: Failure[] = [];
  const adopted = r.adopted ?? [];
  if (adopted.length === 0) return out;
  if (!r.groups) {
    out.push({ kind: 'wrong-consensus', message: `round ${r.round}: the report names no reduce order` });
    return out;
  }
  const flat = r.groups.flat();
  const sorted = [...flat].sort((a, b) => a - b);
  if (sorted.join() !== [...r.accepted].sort((a, b) => a - b).join() || new Set(flat).size !== flat.length)
    out.push({
      kind: 'wrong-consensus',
      message: `round ${r.round}: reduce order [${r.groups.map((g) => `[${g}]`).join(',')}] is not the accepted ranks [${r.accepted}]`,
    });
  if (c.mode !== 'fold' && r.groups.some((g) => g.length !== 1))
    out.push({ kind: 'wrong-consensus', message: `round ${r.round}: ${c.mode} mode folded ranks together` });
  const expected = withDigest(
    expectedConsensus({
      seed: report.seed,
      round: r.round,
      dtype: dtypeCode(report.dtype),
      layout: modelLayout(report.modelBytes),
      groups: r.groups.map((g) => g.map((rank) => ({ rank }))),
    }),
    nodeSha256,
  );
  for (const a of adopted) {
    if (a.weight !== expected.weight)
      out.push({
        kind: 'wrong-consensus',
        message: `round ${r.round}, rank ${a.rank}: weight ${a.weight}, flodl's arithmetic gives ${expected.weight}`,
      });
    else if (a.digest !== expected.digest)
      out.push({
        kind: 'wrong-consensus',
        message: `round ${r.round}, rank ${a.rank}: consensus digest ${a.digest.slice(0, 16)}..., flodl's arithmetic gives ${expected.digest.slice(0, 16)}...`,
      });
  }
  // Every copy delivered is the same frame (the controller scatters one consensus).
  const digests = new Set(adopted.map((a) => a.digest));
  if (digests.size > 1)
    out.push({
      kind: 'wrong-consensus',
      message: `round ${r.round}: ${digests.size} different copies delivered`,
    });
  // Every accepted rank that survives the run (and whose faults allow no death) received it.
  const got = new Set(adopted.map((a) => a.rank));
  const missing = r.accepted.filter((x) => !got.has(x) && !dead.has(x) && !c.mayDie.includes(x));
  if (missing.length > 0)
    out.push({
      kind: 'undelivered',
      message: `round ${r.round}: live rank(s) [${missing}] never adopted the consensus`,
    });
  return out;
}

/** Checks a whole run. */
export function checkRun(c: ChaosCase, obs: RunObservation, ms: number): CaseResult {
  const failures: Failure[] = [];
  let roundsChecked = 0;
  if (obs.hung)
    failures.push({ kind: 'hang', message: 'the run exceeded its wall-clock bound and was killed' });
  if (obs.orphans.length > 0)
    failures.push({
      kind: 'orphan',
      message: `${obs.orphans.length} process(es) left: ${obs.orphans.map((o) => `${o.pid} ${o.cmd}`).join('; ')}`,
    });
  const rep = obs.report;
  if (!rep) {
    if (!obs.hung)
      failures.push({
        kind: 'crash',
        message: `no report (exit ${obs.exitCode ?? obs.signal}): ${obs.stderrTail.trim().slice(-300)}`,
      });
    return { index: c.index, runArgs: c.runArgs, rounds: 0, roundsChecked, failures, ms };
  }
  if (/deadline/.test(rep.ended))
    failures.push({ kind: 'hang', message: `the run ended by its deadline: ${rep.ended}` });
  const dead = new Set(rep.dead);
  for (const r of rep.rounds) {
    const f = checkRound(c, rep, r, dead);
    if ((r.adopted ?? []).length > 0) roundsChecked++;
    failures.push(...f);
  }
  const allowed = new Set([...c.mustDie, ...c.mayDie]);
  const extra = rep.dead.filter((r) => !allowed.has(r));
  if (extra.length > 0)
    failures.push({
      kind: 'unexpected-death',
      message: `rank(s) [${extra}] died though no fault must or may kill them`,
    });
  const missed = c.mustDie.filter((r) => !dead.has(r));
  if (missed.length > 0)
    failures.push({
      kind: 'missed-death',
      message: `rank(s) [${missed}] were killed but are not in the dead set`,
    });
  if (rep.roundsCompleted < rep.roundsRequested && !c.mayEndEarly)
    failures.push({
      kind: 'incomplete',
      message: `${rep.roundsCompleted}/${rep.roundsRequested} rounds (${rep.ended})`,
    });
  return { index: c.index, runArgs: c.runArgs, rounds: rep.rounds.length, roundsChecked, failures, ms };
}
