// relay-lab predict: the round model carried beyond this machine (docs/model.md).
import { parseModes } from '@shared/sweep/spec';
import { CalibrationError } from '@shared/model/calibration';
import { predictBeyond, type BeyondInput, type BeyondResult } from '@shared/model/beyond';
import { ModelInputError } from '@shared/model/round-model';
import { parseBandwidth, parseLatency, UnitError } from '@shared/model/units';
import { beyondJson, beyondText } from '@shared/model/beyond-report';
import { loadCalibration } from '../../model/calibration-file';
import { choiceFlag, numberFlag, parseFlags, printJson, UsageError } from '../args';
import type { Command } from './types';

const USAGE = `usage: relay-lab predict [--hosts H (2)] [--ranks-per-host K (4)] [--model-bytes S (4MiB)] [--dtype f32|bf16]
  [--modes fold,direct] [--host-bandwidth R (12.5GB/s)] [--host-latency T (0ms)]
  [--controller-bandwidth R (12.5GB/s)] [--controller-latency T (0ms)]
  [--host-cores N (K+1)] [--controller-cores N (128)] [--calibration FILE] [--json]
  A round of H hosts x K ranks (H up to 4096, K up to 16) on a network of one NIC per host and
  one at the controller, from this machine's calibration (relay-lab calibrate): round time per
  mode, fold's lead, the bottleneck, the bytes through every NIC, how fast the controller's NIC
  must be for the bottleneck to leave it, and round time against hosts with the points where the
  bottleneck moves. Rates: 12.5GB/s (bytes), 100Gb/s (bits), 800MiB/s or bytes/s; times: 0.5ms, 20us.`;

function flag<T>(name: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof UnitError || e instanceof ModelInputError)
      throw new UsageError(`--${name}: ${e.message}`);
    throw e;
  }
}

export function predictInputFromFlags(
  argv: string[],
): { input: BeyondInput; json: boolean; calibration?: string } | null {
  const { values } = parseFlags(argv, {
    hosts: { type: 'string' },
    'ranks-per-host': { type: 'string' },
    'model-bytes': { type: 'string' },
    dtype: { type: 'string' },
    modes: { type: 'string' },
    'host-bandwidth': { type: 'string' },
    'host-latency': { type: 'string' },
    'controller-bandwidth': { type: 'string' },
    'controller-latency': { type: 'string' },
    'host-cores': { type: 'string' },
    'controller-cores': { type: 'string' },
    calibration: { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean' },
  });
  if (values.help) return null;
  const input: BeyondInput = {
    hosts: numberFlag(values.hosts, 'hosts', 'predictHosts', 2),
    ranksPerHost: numberFlag(values['ranks-per-host'], 'ranks-per-host', 'predictRanksPerHost', 4),
    modelBytes: numberFlag(values['model-bytes'], 'model-bytes', 'predictModelBytes', 4 * 1024 * 1024),
    dtype: choiceFlag(values.dtype, 'dtype', ['f32', 'bf16'] as const, 'f32'),
    modes: flag('modes', () => {
      try {
        return parseModes(values.modes ?? 'fold,direct');
      } catch (e) {
        throw new UnitError((e as Error).message);
      }
    }),
    hostNic: {
      bandwidth: flag('host-bandwidth', () => parseBandwidth(values['host-bandwidth'] ?? '12.5GB/s')),
      latencyMs: flag('host-latency', () => parseLatency(values['host-latency'] ?? '0ms')),
    },
    controllerNic: {
      bandwidth: flag('controller-bandwidth', () =>
        parseBandwidth(values['controller-bandwidth'] ?? '12.5GB/s'),
      ),
      latencyMs: flag('controller-latency', () => parseLatency(values['controller-latency'] ?? '0ms')),
    },
    ...(values['host-cores'] !== undefined
      ? { hostCores: numberFlag(values['host-cores'], 'host-cores', 'cores', 1) }
      : {}),
    ...(values['controller-cores'] !== undefined
      ? { controllerCores: numberFlag(values['controller-cores'], 'controller-cores', 'cores', 1) }
      : {}),
  };
  return { input, json: Boolean(values.json), calibration: values.calibration };
}

export const predictCommand: Command = {
  summary:
    'predict a round of any topology (up to 4096 hosts x 16 ranks) on given NICs, from the calibration',
  async run(argv) {
    const parsed = predictInputFromFlags(argv);
    if (!parsed) {
      process.stdout.write(USAGE + '\n');
      return 0;
    }
    let result: BeyondResult;
    let source: string;
    try {
      const loaded = loadCalibration(parsed.calibration);
      source = loaded.source;
      result = predictBeyond(parsed.input, loaded.calibration);
    } catch (e) {
      if (e instanceof CalibrationError) throw new UsageError(e.message);
      // Out-of-range input, one line: the ranges are BEYOND_LIMITS.
      if (e instanceof ModelInputError) throw new UsageError(e.message);
      throw e;
    }
    if (parsed.json) printJson(beyondJson(result, source));
    else process.stdout.write(beyondText(result, source));
    return 0;
  },
};
