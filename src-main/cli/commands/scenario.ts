// relay-lab scenario: the fault lab's reproductions of the transport's
// incidents (WIRE.md 6). `--list` lists them; `NAME` runs one twice
// (historical behaviour, then flodl 0.7's) and judges it. Exit 0 only when
// the bug reproduced under the historical behaviour and the current one held.
import { parseFlags, printJson, UsageError } from '../args';
import { findScenario, scenarioInfos } from '../../lab/scenarios/registry';
import { runScenario } from '../../lab/scenarios/run-scenario';
import { indexTableFlag } from './role-flags';
import type { Command } from './types';

const USAGE = `usage: relay-lab scenario --list [--json]
       relay-lab scenario NAME|NUMBER [--index-table v2|v2-late] [--json]
Runs a reproduction of one of the transport's incidents twice (the historical,
lab-only behaviour, then flodl 0.7's) and judges both. Exit 0 when the bug
reproduced and the fix held, 1 otherwise, 2 on a usage error. --index-table: the
control message indices the scenario's roles speak (WIRE.md 3.5; default v2).`;

export const scenarioCommand: Command = {
  summary: "reproduce one of the transport's incidents (historical vs flodl 0.7) and judge it",
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      {
        list: { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean' },
        'index-table': { type: 'string' },
      },
      true,
    );
    if (values.help) {
      process.stdout.write(USAGE + '\n');
      return 0;
    }
    if (values.list) {
      if (positionals.length > 0) throw new UsageError('--list takes no scenario name');
      const list = scenarioInfos();
      if (values.json) printJson(list);
      else
        for (const s of list)
          process.stdout.write(
            `${String(s.number).padStart(2)}  ${s.name.padEnd(18)} ${s.title} (${s.incident})\n`,
          );
      return 0;
    }
    const controlIndexTable = indexTableFlag(values['index-table']);
    if (positionals.length !== 1)
      throw new UsageError('give one scenario name (see relay-lab scenario --list)');
    const s = findScenario(positionals[0]);
    if (!s)
      throw new UsageError(
        `no scenario '${positionals[0]}'; known: ${scenarioInfos()
          .map((x) => x.name)
          .join(', ')}`,
      );
    const result = await runScenario(
      s,
      (phase, message) => process.stderr.write(`scenario ${s.name} [${phase}]: ${message}\n`),
      undefined,
      { controlIndexTable },
    );
    if (values.json) printJson(result);
    else {
      process.stdout.write(
        `${s.number}. ${s.title} (${s.incident})\n` +
          `  historical: ${result.historical.reproduced ? 'reproduced' : 'NOT reproduced'} ${JSON.stringify(result.historical.evidence)}\n` +
          `  current:    ${result.current.held ? 'held' : 'did NOT hold'} ${JSON.stringify(result.current.evidence)}\n` +
          `  verdict ${result.verdict} in ${result.timings.totalMs} ms${result.error ? ` (${result.error})` : ''}\n`,
      );
    }
    return result.verdict === 'ok' ? 0 : 1;
  },
};
