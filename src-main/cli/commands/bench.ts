// relay-lab bench: the engine against this machine's own limits, in one run.
import {
  BENCH_SECTIONS,
  benchLoopback,
  benchMachine,
  runBench,
  runFoldBench,
  type BenchSection,
} from '../../lab/bench';
import { benchTap } from '../../capture/tap-bench';
import { DEFAULT_MODELS, benchScale } from '../../lab/bench/scale';
import { benchEarlierPages } from '../../lab/bench/earlier-pages';
import { numberFlag, optionalNumberFlag, parseFlags, printJson, UsageError } from '../args';
import { TOPOLOGY_LIMITS } from '@shared/lab/topology-config';
import type { Command } from './types';

export const benchCommand: Command = {
  summary: "measure the engine against this machine's own limits (ratios)",
  async run(argv) {
    const { values } = parseFlags(argv, {
      json: { type: 'boolean' },
      'model-bytes': { type: 'string' },
      'ranks-per-host': { type: 'string' },
      hosts: { type: 'string' },
      rounds: { type: 'string' },
      scale: { type: 'boolean' },
      'scale-max-bytes': { type: 'string' },
      only: { type: 'string' },
      help: { type: 'boolean' },
    });
    if (values.help) {
      process.stdout.write(
        'usage: relay-lab bench [--json] [--model-bytes S (16MiB)] [--hosts H (2)] [--ranks-per-host K (4)] [--rounds N (3)]\n' +
          '                        [--scale [--scale-max-bytes S (256MiB)]]  (scale: 1x1..8x8 ranks at 64 KiB, models 4 KiB..256 MiB at 2x4; long)\n' +
          '                        [--only fold|rounds|scale|tap|pages]  (one section: the fold microbenchmarks; the rounds and their floor; the scale section;\n' +
          '                                                          the tap; "Show earlier" pages of 2,000 units read back from 5,000- and 20,000-unit recordings)\n',
      );
      return 0;
    }
    const only = values.only as BenchSection | undefined;
    if (only !== undefined && !BENCH_SECTIONS.includes(only)) {
      process.stderr.write(`relay-lab bench: --only takes ${BENCH_SECTIONS.join(', ')}, not '${only}'\n`);
      return 2;
    }
    // Every number checked before any section starts.
    const scaleMax = numberFlag(
      values['scale-max-bytes'],
      'scale-max-bytes',
      'scaleMaxBytes',
      256 * 1024 * 1024,
    );
    const roundModelBytes = numberFlag(values['model-bytes'], 'model-bytes', 'modelBytes', 16 * 1024 * 1024);
    const hosts = numberFlag(values.hosts, 'hosts', 'hosts', 2);
    const ranksPerHost = numberFlag(values['ranks-per-host'], 'ranks-per-host', 'ranksPerHost', 4);
    const rounds = optionalNumberFlag(values.rounds, 'rounds', 'benchRounds');
    // The lab's limit on rank processes in one topology (64), as for run and the window.
    if (hosts * ranksPerHost > TOPOLOGY_LIMITS.maxTotalRanks)
      throw new UsageError(
        `--hosts ${hosts} x --ranks-per-host ${ranksPerHost} is ${hosts * ranksPerHost} ranks: at most ${TOPOLOGY_LIMITS.maxTotalRanks} in all`,
      );
    const log = (m: string) => process.stderr.write(`bench: ${m}\n`);
    const models = DEFAULT_MODELS.filter((b) => b <= scaleMax);
    const print = (result: unknown) => {
      if (values.json) printJson(result);
      else process.stdout.write(JSON.stringify(result, null, 2) + '\n');
      return 0;
    };
    if (only === 'fold') return print({ machine: await benchMachine(), ...runFoldBench() });
    if (only === 'tap')
      return print({
        machine: await benchMachine(),
        loopbackTcp: await benchLoopback(64 * 1024 * 1024),
        tap: await benchTap(),
      });
    if (only === 'pages')
      return print({ machine: await benchMachine(), pages: await benchEarlierPages({ log }) });
    if (only === 'scale')
      return print({
        machine: await benchMachine(),
        // --rounds sets the rounds per scale point too (default 3).
        scale: await benchScale({
          log,
          models,
          rounds,
        }),
      });
    const result = await runBench({
      roundModelBytes,
      hosts,
      ranksPerHost,
      rounds: rounds ?? 3,
      scale: values.scale ? { models } : undefined,
      only,
      log,
    });
    return print(result);
  },
};
