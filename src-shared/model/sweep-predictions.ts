// Every case of a sweep with the round model's prediction beside it.
import type { SweepResult } from '../sweep/types';
import type { Calibration } from './calibration';
import { predictCase } from './validate-case';

export function withPredictions(r: SweepResult, cal: Calibration): SweepResult {
  return {
    ...r,
    cases: r.cases.map((c) => (c.error ? c : { ...c, predicted: predictCase(r.spec, c, cal) })),
  };
}
