// relay-lab rank: one rank as a standalone process (CLI.md 3). It starts
// reducing right after its handshakes, runs --rounds rounds, then exits.
import { DEFAULT_CONTROL_VERSION, DEFAULT_DATA_VERSION } from '@shared/wire/constants';
import { runRank } from '../../rank/rank-runner';
import { choiceFlag, numberFlag, parseFlags, printJson, UsageError } from '../args';
import {
  INDEX_TABLE_USAGE,
  indexTableFlag,
  portFlag,
  sessionSaltFlag,
  worldSizeFlag,
  modelBytesFlag,
} from './role-flags';
import type { Command } from './types';

export const rankCommand: Command = {
  summary: 'run one rank alone against its relay (or the controller in direct mode)',
  async run(argv) {
    const { values } = parseFlags(argv, {
      rank: { type: 'string' },
      'world-size': { type: 'string' },
      salt: { type: 'string' },
      address: { type: 'string' },
      'data-port': { type: 'string' },
      'control-port': { type: 'string' },
      rounds: { type: 'string' },
      'model-bytes': { type: 'string' },
      dtype: { type: 'string' },
      seed: { type: 'string' },
      direct: { type: 'boolean' },
      'data-version': { type: 'string' },
      'control-version': { type: 'string' },
      'index-table': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean' },
    });
    if (values.help) {
      process.stdout.write(
        'usage: relay-lab rank --rank R --world-size N --salt HEX [--data-port P (1341; 1337 with --direct)] [--control-port P (1342; 1337)] [--address ADDR]\n' +
          '  [--rounds N (10)] [--model-bytes S (4MiB)] [--dtype f32|bf16] [--seed N] [--direct (lab-only)]\n' +
          `  [${INDEX_TABLE_USAGE}] [--json]\n`,
      );
      return 0;
    }
    if (values.rank === undefined || values['world-size'] === undefined)
      throw new UsageError('--rank R and --world-size N are required');
    const worldSize = worldSizeFlag(values['world-size']);
    const rank = numberFlag(values.rank, 'rank', 'rank', 0);
    if (worldSize === 0) throw new UsageError('world_size must be at least 1');
    if (rank >= worldSize) throw new UsageError(`rank_id ${rank} must be < world_size ${worldSize}`);
    // Defaults meet a relay whose controller is on the default port 1337
    // (relay listeners at +4 and +5), or the controller itself in direct mode.
    const direct = values.direct ?? false;
    const spec = {
      rank,
      worldSize,
      saltHex: sessionSaltFlag(values.salt).hex,
      address: values.address ?? '127.0.0.1',
      dataPort: portFlag(values['data-port'], 'data-port', direct ? 1337 : 1341),
      controlPort: portFlag(values['control-port'], 'control-port', direct ? 1337 : 1342),
      direct,
      dataVersion: numberFlag(values['data-version'], 'data-version', 'version', DEFAULT_DATA_VERSION),
      controlVersion: numberFlag(
        values['control-version'],
        'control-version',
        'version',
        DEFAULT_CONTROL_VERSION,
      ),
      controlIndexTable: indexTableFlag(values['index-table']),
      modelBytes: modelBytesFlag(values['model-bytes']),
      dtype: choiceFlag(values.dtype, 'dtype', ['f32', 'bf16'] as const, 'f32'),
      seed: numberFlag(values.seed, 'seed', 'seed', 1),
      rounds: numberFlag(values.rounds, 'rounds', 'rounds', 10),
      idle: false,
      paced: false,
      heartbeatMs: 500,
      report: values.json ? 'json' : 'none',
      sampleMax: 4096,
    } as const;
    let result;
    try {
      result = await runRank(spec);
    } catch (e) {
      // Connection or handshake failure: a named error, never a stack trace.
      result = {
        rank,
        roundsCompleted: 0,
        rounds: [],
        verdict: 'error' as const,
        error: (e as Error).message,
      };
    }
    if (values.json) printJson(result);
    else
      process.stderr.write(
        `rank ${rank}: ${result.roundsCompleted} rounds, verdict ${result.verdict}${result.error ? ` (${result.error})` : ''}\n`,
      );
    return result.verdict === 'ok' ? 0 : 1;
  },
};
