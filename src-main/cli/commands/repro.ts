// relay-lab repro FILE: replays a reproduction file headless on real
// processes, checks its expectations and reports (exit 0 held, 1 an
// expectation failed, 2 usage or format error; docs/reproduction-format.md).
import fs from 'node:fs';
import { checkOutputs, inputFile } from '../files';
import { parseRepro, ReproFormatError } from '@shared/repro';
import { parseFlags, printJson, UsageError } from '../args';
import { TopologyConfigError, parseTopologyConfig } from '@shared/lab/topology-config';
import { recordSession } from '../../lab/trace/session-recording';
import type { TraceRecorder } from '../../lab/trace/recorder';
import { reproConfig, reproRelayNotices, runRepro } from '../../repro/runner';
import type { Command } from './types';

const USAGE = `usage: relay-lab repro FILE [--json] [--trace OUT.ndjson]
  Replays the reproduction FILE (format: docs/reproduction-format.md) on real processes,
  checks its expectations and prints each one. Exit 0 when all hold, 1 when one fails
  (named by its JSON path), 2 for a usage or format error (named, with the path in the file).`;

export const reproCommand: Command = {
  summary: 'replay a reproduction file headless and check its expectations',
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      { json: { type: 'boolean' }, trace: { type: 'string' }, help: { type: 'boolean' } },
      true,
    );
    if (values.help) {
      process.stdout.write(USAGE + '\n');
      return 0;
    }
    if (positionals.length !== 1) throw new UsageError('relay-lab repro needs exactly one FILE');
    const file = positionals[0];
    const input = inputFile('the reproduction file', file);
    checkOutputs([{ label: '--trace', path: values.trace }], [input]);
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      throw new UsageError(`cannot read ${file}: ${(e as Error).message}`);
    }
    let repro;
    try {
      repro = parseRepro(text);
      parseTopologyConfig(reproConfig(repro), { labFields: true });
    } catch (e) {
      if (e instanceof ReproFormatError) throw new UsageError(`${file}: ${e.message}`);
      if (e instanceof TopologyConfigError)
        throw new UsageError(`${file}: BAD_VALUE at topology: ${e.message}`);
      throw e;
    }
    const tracePath = values.trace;
    // A replay with another relay program than the recorded run's says so before it runs.
    for (const notice of reproRelayNotices(repro)) process.stderr.write(`relay-lab repro: ${notice}\n`);
    let recorder: TraceRecorder | null = null;
    const { report, results, held } = await runRepro(repro, {
      snapLen: tracePath === undefined ? 0 : 64 * 1024,
      onExternalRelayLine: (h, _stream, line) => process.stderr.write(`[h${h} relay] ${line}\n`),
      onRoundsStart: (session) => {
        if (tracePath !== undefined)
          recorder = recordSession(session, tracePath, { producer: 'relay-lab repro' });
      },
    });
    if (recorder) {
      await (recorder as TraceRecorder).close();
      process.stderr.write(`relay-lab repro: trace saved to ${tracePath}\n`);
    }
    if (values.json) printJson({ file, name: repro.name, held, expectations: results, report });
    else {
      const out = [
        `${repro.name ?? file}: ${report.roundsCompleted}/${report.roundsRequested} rounds, dead [${report.dead.join(', ')}], verdict ${report.verdict} (${report.ended})`,
        ...report.rounds.map(
          (r) =>
            `  round ${r.round}: ${r.verdict}, accepted [${r.accepted.join(', ')}], consensusSha256 ${r.consensusSha256 ?? '-'}`,
        ),
        ...results.map(
          (x) => `  ${x.ok ? 'holds' : 'FAILS'} ${x.name}: expected ${x.expected}, got ${x.actual}`,
        ),
        held
          ? `all ${results.length} expectations hold`
          : `failed: ${results
              .filter((x) => !x.ok)
              .map((x) => x.name)
              .join(', ')}`,
      ];
      process.stdout.write(out.join('\n') + '\n');
    }
    return held ? 0 : 1;
  },
};
