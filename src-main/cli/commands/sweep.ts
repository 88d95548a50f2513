// relay-lab sweep: every (topology, mode) case of one workload on real
// processes and sockets, one after another, measured against the theory.
import fs from 'node:fs';
import path from 'node:path';
import {
  AUTO_WARMUP,
  DEFAULT_WARMUP,
  parseModes,
  parseTopologies,
  parseWarmup,
  SweepSpecError,
  validateSweepSpec,
} from '@shared/sweep/spec';
import { sweepToCsv } from '@shared/sweep/csv';
import type { SweepResult, SweepSpec, SweepWarmup } from '@shared/sweep/types';
import { choiceFlag, numberFlag, parseFlags, printJson, UsageError } from '../args';
import { runSweep } from '../../sweep/runner';
import { sweepTable } from '../../sweep/report';
import type { Command } from './types';
import { CalibrationError, type Calibration } from '@shared/model/calibration';
import { withPredictions } from '@shared/model/sweep-predictions';
import { loadCalibration } from '../../model/calibration-file';

const USAGE = `usage: relay-lab sweep [--topologies 1x8,2x4,4x2,8x1,4+2+1] [--modes fold,forward,direct]
  [--model-bytes S] [--dtype f32|bf16] [--rounds N] [--warmup N|auto (auto)] [--uplink-bandwidth BYTES_PER_S]
  [--uplink-latency-ms MS] [--seed N] [--trace-dir DIR] [--predict [--calibration FILE]] [--relay-cmd COMMAND]
  [--json | --csv]
  Runs every topology x mode case for real, one after another (progress on stderr).
  --warmup rounds run first in each case and are left out of its figures (JIT, cold buffers);
  auto (the default) runs them until the lab's own code is compiled: at least ${AUTO_WARMUP.minRounds} rounds,
  then up to ${AUTO_WARMUP.maxRounds} or ${AUTO_WARMUP.maxMs / 1000} s, whichever comes first (each case says how many it ran).
  --uplink-bandwidth/--uplink-latency-ms shape every host uplink in both directions with
  one rate shared by the host's connections (in direct mode: the host's ranks' connections
  to the controller together), so every mode gets the same NIC per host.
  --trace-dir saves each case's trace there. Ctrl-C stops the running case and prints
  the cases that finished. --predict puts the round model's prediction beside every case
  (docs/model.md; the calibration from relay-lab calibrate, default file or --calibration).
  --relay-cmd runs every host's relay in the fold cases as COMMAND (a flodl build, or
  'npx relay-lab relay --from-env'), as run --relay-cmd '*=COMMAND' does; forward and direct keep the lab's.
  forward and direct are lab-only modes (flodl 0.7 has only fold).`;

function warmupFlag(text: string | undefined): SweepWarmup {
  if (text === undefined) return DEFAULT_WARMUP;
  try {
    return parseWarmup(text);
  } catch (e) {
    throw new UsageError(`--warmup: ${(e as Error).message}`);
  }
}

export function sweepSpecFromFlags(argv: string[]): {
  spec: SweepSpec;
  format: 'json' | 'csv' | 'table';
  traceDir?: string;
  predict?: { calibration?: string };
} | null {
  const { values } = parseFlags(argv, {
    topologies: { type: 'string' },
    modes: { type: 'string' },
    'model-bytes': { type: 'string' },
    dtype: { type: 'string' },
    rounds: { type: 'string' },
    warmup: { type: 'string' },
    'uplink-bandwidth': { type: 'string' },
    'uplink-latency-ms': { type: 'string' },
    seed: { type: 'string' },
    'trace-dir': { type: 'string' },
    predict: { type: 'boolean' },
    calibration: { type: 'string' },
    'relay-cmd': { type: 'string' },
    json: { type: 'boolean' },
    csv: { type: 'boolean' },
    help: { type: 'boolean' },
  });
  if (values.help) return null;
  if (values.json && values.csv) throw new UsageError('--json and --csv exclude each other');
  if (values.calibration !== undefined && !values.predict)
    throw new UsageError('--calibration goes with --predict');
  if (values.calibration !== undefined && !fs.existsSync(values.calibration))
    throw new UsageError(`--calibration: no file at ${values.calibration}`);
  try {
    const spec: SweepSpec = {
      topologies: parseTopologies(values.topologies ?? '1x8,2x4,4x2,8x1'),
      modes: parseModes(values.modes ?? 'fold,forward,direct'),
      modelBytes: numberFlag(values['model-bytes'], 'model-bytes', 'modelBytes', 4 * 1024 * 1024),
      dtype: choiceFlag(values.dtype, 'dtype', ['f32', 'bf16'] as const, 'f32'),
      rounds: numberFlag(values.rounds, 'rounds', 'sweepRounds', 5),
      warmupRounds: warmupFlag(values.warmup),
      seed: numberFlag(values.seed, 'seed', 'seed', 1),
      ...(values['relay-cmd'] !== undefined ? { relayCommand: values['relay-cmd'] } : {}),
    };
    if (values['uplink-bandwidth'] !== undefined)
      spec.uplinkBandwidth = numberFlag(values['uplink-bandwidth'], 'uplink-bandwidth', 'sweepBandwidth', 0);
    if (values['uplink-latency-ms'] !== undefined)
      spec.uplinkLatencyMs = numberFlag(
        values['uplink-latency-ms'],
        'uplink-latency-ms',
        'sweepLatencyMs',
        0,
      );
    const traceDir = values['trace-dir'];
    if (traceDir !== undefined && !fs.existsSync(path.dirname(path.resolve(traceDir))))
      throw new UsageError(`--trace-dir: folder ${path.dirname(path.resolve(traceDir))} does not exist`);
    if (traceDir !== undefined && fs.existsSync(traceDir) && !fs.statSync(traceDir).isDirectory())
      throw new UsageError(`--trace-dir: ${traceDir} is a file, not a folder`);
    return {
      spec: validateSweepSpec(spec),
      format: values.json ? 'json' : values.csv ? 'csv' : 'table',
      traceDir,
      ...(values.predict ? { predict: { calibration: values.calibration } } : {}),
    };
  } catch (e) {
    if (e instanceof SweepSpecError) throw new UsageError(e.message);
    throw e;
  }
}

export const sweepCommand: Command = {
  summary:
    'run topologies x modes for real (optionally shaped uplinks) and compare bytes and times with theory',
  async run(argv) {
    const parsed = sweepSpecFromFlags(argv);
    if (!parsed) {
      process.stdout.write(USAGE + '\n');
      return 0;
    }
    const { spec, format, traceDir, predict } = parsed;
    // The calibration is read (and checked) before any case runs: a bad file is a usage error now, not after the sweep.
    let calibration: Calibration | undefined;
    if (predict) {
      try {
        const loaded = loadCalibration(predict.calibration);
        calibration = loaded.calibration;
        process.stderr.write(`relay-lab sweep: predicting with the calibration ${loaded.source}\n`);
      } catch (e) {
        if (e instanceof CalibrationError) throw new UsageError(e.message);
        throw e;
      }
    }
    const abort = new AbortController();
    // Ctrl-C: the running case stops and is dropped; the finished ones are printed.
    const onSigint = () => {
      if (abort.signal.aborted) return;
      process.stderr.write('\nrelay-lab sweep: interrupted, keeping the finished cases\n');
      abort.abort('interrupted');
    };
    process.on('SIGINT', onSigint);
    let result: SweepResult;
    const t0 = Date.now();
    try {
      result = await runSweep(spec, {
        signal: abort.signal,
        traceDir,
        onProgress: (p) => {
          if (p.state !== 'running') return;
          const secs = ((Date.now() - t0) / 1000).toFixed(0);
          if (p.current)
            process.stderr.write(`relay-lab sweep: [${p.done + 1}/${p.total}] ${p.current} (${secs} s)\n`);
          else if (p.finished)
            process.stderr.write(
              `relay-lab sweep: [${p.done}/${p.total}] ${p.finished.topology} ${p.finished.mode}: median ${p.finished.roundMs.median.toFixed(1)} ms, ${p.finished.verdict}\n`,
            );
        },
      });
    } finally {
      process.off('SIGINT', onSigint);
    }
    if (calibration) result = withPredictions(result, calibration);
    if (format === 'json') printJson(result);
    else if (format === 'csv') process.stdout.write(sweepToCsv(result));
    else process.stdout.write(sweepTable(result));
    const failed = result.cases.some((c) => c.verdict !== 'ok');
    return failed || !result.complete ? 1 : 0;
  },
};
