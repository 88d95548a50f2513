// relay-lab bench: the engine against this machine's own limits, in one run.
import { runBench } from '../../lab/bench';
import { intFlag, parseFlags, printJson, sizeFlag } from '../args';
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
      help: { type: 'boolean' },
    });
    if (values.help) {
      process.stdout.write(
        'usage: relay-lab bench [--json] [--model-bytes S (16MiB)] [--hosts H (2)] [--ranks-per-host K (4)] [--rounds N (3)]\n',
      );
      return 0;
    }
    const result = await runBench({
      roundModelBytes: sizeFlag(values['model-bytes'], 'model-bytes', 16 * 1024 * 1024),
      hosts: intFlag(values.hosts, 'hosts', 2, 1),
      ranksPerHost: intFlag(values['ranks-per-host'], 'ranks-per-host', 4, 1),
      rounds: intFlag(values.rounds, 'rounds', 3, 1),
      log: (m) => process.stderr.write(`bench: ${m}\n`),
    });
    if (values.json) printJson(result);
    else process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    return 0;
  },
};
