import type { Command } from './types';
import { encodeCommand } from './encode';
import { decodeCommand } from './decode';
import { runCommand } from './run';
import { controllerCommand } from './controller';
import { relayCommand } from './relay';
import { rankCommand } from './rank';
import { scenarioCommand } from './scenario';
import { benchCommand } from './bench';
import { traceCommand } from '../../lab/trace/cli';
import { tapCommand } from './tap';
import { importCommand } from './import';
import { sweepCommand } from './sweep';
import { reproCommand } from './repro';
import { chaosCommand } from './chaos';
import { slurmCommand } from './slurm';
import { calibrateCommand } from './calibrate';
import { predictCommand } from './predict';

export const commands: Record<string, Command> = {
  encode: encodeCommand,
  decode: decodeCommand,
  run: runCommand,
  controller: controllerCommand,
  relay: relayCommand,
  rank: rankCommand,
  scenario: scenarioCommand,
  bench: benchCommand,
  trace: traceCommand,
  tap: tapCommand,
  import: importCommand,
  sweep: sweepCommand,
  repro: reproCommand,
  chaos: chaosCommand,
  slurm: slurmCommand,
  calibrate: calibrateCommand,
  predict: predictCommand,
};
