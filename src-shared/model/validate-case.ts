// A sweep case's prediction beside its measurement: the predicted round, its
// bottleneck, the error against the measured median, and where the model
// missed, the stage it got most wrong (the measured stage breakdown against
// the predicted one).
import { ROUND_STAGES } from '../lab/round-stages';
import type { SweepCase, SweepSpec } from '../sweep/types';
import type { Calibration } from './calibration';
import { predictRound, predictedStageMs, type ModelStage } from './round-model';
import type { CasePrediction } from './case-prediction';

export type { CasePrediction } from './case-prediction';

/** Shaped cases (uplink bandwidth set) within 25 % of the measured median, unshaped within 40 %. */
export const TOLERANCE = { shaped: 0.25, unshaped: 0.4 } as const;

export function predictCase(spec: SweepSpec, c: SweepCase, cal: Calibration): CasePrediction {
  const p = predictRound(
    {
      ranksPerHost: c.ranksPerHost,
      mode: c.mode,
      modelBytes: spec.modelBytes,
      dtype: spec.dtype,
      placement: 'local',
      hostNic: { bandwidth: spec.uplinkBandwidth || undefined, latencyMs: spec.uplinkLatencyMs ?? 0 },
    },
    cal,
  );
  const tolerance = spec.uplinkBandwidth ? TOLERANCE.shaped : TOLERANCE.unshaped;
  const measured = c.roundsCompleted > 0 ? c.roundMs.median : 0;
  const error = measured > 0 ? (p.roundMs - measured) / measured : null;
  const within = error === null ? null : Math.abs(error) <= tolerance;
  const stagesMs: Partial<Record<ModelStage, number>> = {};
  for (const s of p.stages) stagesMs[s.stage] = round2(s.ms);
  const out: CasePrediction = {
    roundMs: round2(p.roundMs),
    bottleneck: { stage: p.bottleneck.stage, resource: p.bottleneck.resource },
    stagesMs,
    error: error === null ? null : Math.round(error * 1000) / 1000,
    tolerance,
    within,
  };
  if (within === false && c.stages) {
    let worst: CasePrediction['wrongStage'];
    for (const stage of ROUND_STAGES) {
      const m = c.stages.medianMs[stage];
      if (m === undefined) continue;
      const pm = predictedStageMs(p, stage);
      if (!worst || Math.abs(pm - m) > Math.abs(worst.predictedMs - worst.measuredMs))
        worst = { stage, predictedMs: round2(pm), measuredMs: m };
    }
    if (worst) out.wrongStage = worst;
  }
  return out;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** One line on a case's prediction: `predicted 54.4 ms (-10 %), bound by uplink/hostUplink`, and the missed stage. */
export function predictionLine(p: CasePrediction): string {
  const err = p.error === null ? '' : ` (${p.error >= 0 ? '+' : ''}${Math.round(p.error * 100)} %)`;
  const miss = p.wrongStage
    ? `; outside ${Math.round(p.tolerance * 100)} %: the model's ${p.wrongStage.stage} ${p.wrongStage.predictedMs} ms against ${p.wrongStage.measuredMs} measured`
    : '';
  return `predicted ${p.roundMs} ms${err}, bound by ${p.bottleneck.stage}/${p.bottleneck.resource}${miss}`;
}
