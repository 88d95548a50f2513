// The sweep's part of the lab contract (src-shared/lab/contract.ts carries
// it to the window): commands the lab host answers, and the progress event.
//
//   sweep {spec}       runs the sweep; progress streams as `sweep` events, the
//                      reply carries the result (`sweep`) and the saved JSON (`sweepFile`).
//                      BUSY while one runs. Each case's trace lands in the traces folder.
//   cancelSweep        stops the running case; the finished ones are kept (reply at once).
//   saveSweep {format} writes the last result as json or csv into the traces folder (`sweepFile`).
//   listSweeps         saved sweeps of the traces folder (`sweeps`).
//   openSweep {name}   reads a saved sweep back (`sweep`).
import type { SweepProgress, SweepSpec } from './types';

export type SweepCommand =
  | { type: 'sweep'; spec: SweepSpec }
  | { type: 'cancelSweep' }
  | { type: 'saveSweep'; format: 'json' | 'csv' }
  | { type: 'listSweeps' }
  | { type: 'openSweep'; name: string };

export const SWEEP_COMMAND_TYPES = ['sweep', 'cancelSweep', 'saveSweep', 'listSweeps', 'openSweep'] as const;

/** A saved sweep's file name in the traces folder. */
export const SWEEP_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}\.sweep\.(json|csv)$/;

export interface SweepEvent {
  type: 'sweep';
  progress: SweepProgress;
}

export function isSweepCommand(cmd: { type: string }): cmd is SweepCommand {
  return (SWEEP_COMMAND_TYPES as readonly string[]).includes(cmd.type);
}
