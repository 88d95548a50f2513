// relay-lab chaos: a soak of randomized runs (topologies, modes, policies,
// dtypes, sizes, kills, pauses, host kills, link faults), each checked
// independently of the engine's checker (issue 17 item 6). Exit 0 when every
// check holds, 1 otherwise; --json prints one document, progress on stderr.
import { numberFlag, parseFlags, printJson, UsageError } from '../args';
import { formatSoak, replayCommand, soak } from '../../chaos/soak';
import type { Command } from './types';

const USAGE = `usage: relay-lab chaos [--runs N] [--seed S] [--only I,J] [--case-timeout-ms MS] [--json]
  Runs N randomized cases (1-3 hosts, 1-4 ranks each, fold/forward/direct, elastic/strict,
  f32/bf16, 1 KiB-256 KiB, 3-8 rounds, kills, pauses, host kills, link faults), one at a time,
  each as 'relay-lab run ... --json'. Checks every round's consensus bit for bit against flodl's
  arithmetic recomputed here, every delivered copy, the dead set, leftover processes and hangs.
  --only replays the given case indices of the seed; a failing case also prints its 'run' line.`;

export const chaosCommand: Command = {
  summary: 'soak randomized faulty runs and check each independently of the engine',
  async run(argv) {
    const { values } = parseFlags(argv, {
      runs: { type: 'string' },
      seed: { type: 'string' },
      only: { type: 'string' },
      'case-timeout-ms': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean' },
    });
    if (values.help) {
      process.stdout.write(USAGE + '\n');
      return 0;
    }
    const runs = numberFlag(values.runs, 'runs', 'chaosRuns', 20);
    const seed = numberFlag(values.seed, 'seed', 'seed', 1);
    let only: number[] | undefined;
    if (values.only !== undefined) {
      if (!/^\d+(,\d+)*$/.test(values.only))
        throw new UsageError(`--only must be case indices like 3,17, got '${values.only}'`);
      only = values.only.split(',').map((i) => numberFlag(i, 'only', 'chaosCase', 0));
    }
    // A run has its own deadline; the wall bound adds room for process start and teardown.
    const runTimeoutMs = numberFlag(values['case-timeout-ms'], 'case-timeout-ms', 'caseTimeoutMs', 60_000);
    const report = await soak({
      runs,
      seed,
      only,
      runTimeoutMs,
      wallMs: runTimeoutMs + 30_000,
      onCase: (c, r) =>
        process.stderr.write(
          `chaos ${c.index}: ${r.failures.length === 0 ? 'ok' : r.failures.map((f) => f.kind).join(',')} ` +
            `(${r.roundsChecked}/${c.rounds} rounds checked, ${(r.ms / 1000).toFixed(1)} s) ${replayCommand(c)}\n`,
        ),
    });
    if (values.json) printJson(report);
    else process.stdout.write(formatSoak(report) + '\n');
    return report.ok ? 0 : 1;
  },
};
