// Checks sweep commands that arrive from the window (an untrusted side), the
// same way src-shared/lab/validate.ts checks the rest: a fresh value or a
// named error.
import { SWEEP_NAME, type SweepCommand } from './contract';
import { SweepSpecError, validateSweepSpec } from './spec';

function fail(message: string): never {
  throw new SweepSpecError(message);
}

function only(v: Record<string, unknown>, keys: string[]): void {
  for (const k of Object.keys(v)) if (!keys.includes(k)) fail(`${String(v.type)}: unknown field '${k}'`);
}

export function validateSweepCommand(v: Record<string, unknown>): SweepCommand {
  switch (v.type) {
    case 'sweep':
      only(v, ['type', 'spec']);
      return { type: 'sweep', spec: validateSweepSpec(v.spec) };
    case 'cancelSweep':
    case 'listSweeps':
      only(v, ['type']);
      return { type: v.type };
    case 'saveSweep':
      only(v, ['type', 'format']);
      if (v.format !== 'json' && v.format !== 'csv') fail('saveSweep.format must be json or csv');
      return { type: 'saveSweep', format: v.format };
    case 'openSweep':
      only(v, ['type', 'name']);
      if (typeof v.name !== 'string' || !SWEEP_NAME.test(v.name) || !v.name.endsWith('.json'))
        fail('openSweep.name must be a saved sweep of the traces folder ending in .sweep.json');
      return { type: 'openSweep', name: v.name };
    default:
      fail(`'${String(v.type)}' is not a sweep command`);
  }
}
