// A chaos soak: N generated cases run one after another (a 2-core machine
// runs one topology at a time), each checked on its own, summed into a
// report with the replay command of every failing run.
import { checkRun, type CaseResult, type FailureKind, type RunObservation } from './check';
import { generateCase, type ChaosCase } from './generate';
import { runCase, type RunOptions } from './runner';

export interface SoakReport {
  seed: number;
  runs: number;
  /** Rounds the runs reported, and those whose consensus was recomputed and compared. */
  rounds: number;
  roundsChecked: number;
  faults: number;
  wrongConsensus: number;
  unexpectedDeaths: number;
  missedDeaths: number;
  undelivered: number;
  incomplete: number;
  hangs: number;
  orphans: number;
  crashes: number;
  failing: { index: number; replay: string; soakReplay: string; failures: CaseResult['failures'] }[];
  ok: boolean;
  ms: number;
}

/** The shell command that replays a case by itself. */
export function replayCommand(c: Pick<ChaosCase, 'runArgs'>): string {
  return ['relay-lab', 'run', ...c.runArgs, '--json'].join(' ');
}

export function summarize(seed: number, cases: ChaosCase[], results: CaseResult[], ms: number): SoakReport {
  const count = (k: FailureKind) =>
    results.reduce((n, r) => n + r.failures.filter((f) => f.kind === k).length, 0);
  const runsWith = (k: FailureKind) => results.filter((r) => r.failures.some((f) => f.kind === k)).length;
  const failing = results
    .filter((r) => r.failures.length > 0)
    .map((r) => ({
      index: r.index,
      replay: replayCommand(cases[r.index] ?? r),
      soakReplay: `relay-lab chaos --seed ${seed} --only ${r.index}`,
      failures: r.failures,
    }));
  return {
    seed,
    runs: results.length,
    rounds: results.reduce((n, r) => n + r.rounds, 0),
    roundsChecked: results.reduce((n, r) => n + r.roundsChecked, 0),
    faults: cases.reduce((n, c) => n + c.runArgs.filter((a) => /^--(kill|pause|link)/.test(a)).length, 0),
    wrongConsensus: count('wrong-consensus'),
    unexpectedDeaths: runsWith('unexpected-death'),
    missedDeaths: runsWith('missed-death'),
    undelivered: count('undelivered'),
    incomplete: runsWith('incomplete'),
    hangs: runsWith('hang'),
    orphans: runsWith('orphan'),
    crashes: runsWith('crash'),
    failing,
    ok: failing.length === 0,
    ms,
  };
}

export interface SoakOptions extends RunOptions {
  runs: number;
  seed: number;
  /** Run only these case indices (replay of a failing case). */
  only?: number[];
  onCase?: (c: ChaosCase, r: CaseResult) => void;
  /** Replaces the process runner (tests feed the checks observations of their own). */
  run?: (c: ChaosCase, tag: string) => Promise<RunObservation>;
}

export async function soak(opts: SoakOptions): Promise<SoakReport> {
  const t0 = Date.now();
  const indices = opts.only ?? Array.from({ length: opts.runs }, (_, i) => i);
  const cases: ChaosCase[] = [];
  const results: CaseResult[] = [];
  for (const i of indices) {
    const c = generateCase(opts.seed, i);
    cases[i] = c;
    const tag = `${process.pid}-${opts.seed}-${i}-${Date.now()}`;
    const started = Date.now();
    const obs = opts.run ? await opts.run(c, tag) : await runCase(c.runArgs, tag, opts);
    const r = checkRun(c, obs, Date.now() - started);
    results.push(r);
    opts.onCase?.(c, r);
  }
  return summarize(opts.seed, cases, results, Date.now() - t0);
}

export function formatSoak(r: SoakReport): string {
  const lines = [
    `chaos seed ${r.seed}: ${r.runs} runs, ${r.rounds} rounds (${r.roundsChecked} checked bit for bit), ${r.faults} faults, ${(r.ms / 1000).toFixed(1)} s`,
    `wrong consensus ${r.wrongConsensus}, unexpected deaths ${r.unexpectedDeaths}, missed deaths ${r.missedDeaths}, undelivered ${r.undelivered}, incomplete ${r.incomplete}, hangs ${r.hangs}, orphans ${r.orphans}, crashes ${r.crashes}`,
  ];
  for (const f of r.failing) {
    lines.push(`FAIL case ${f.index}: ${f.replay}`);
    for (const x of f.failures) lines.push(`  ${x.kind}: ${x.message}`);
  }
  lines.push(r.ok ? 'all checks hold' : `${r.failing.length} failing run(s)`);
  return lines.join('\n');
}
