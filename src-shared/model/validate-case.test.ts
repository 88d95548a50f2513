import { describe, expect, it } from 'vitest';
import type { SweepCase, SweepSpec } from '../sweep/types';
import { predictCase, predictionLine } from './validate-case';
import { predictRound } from './round-model';
import { REFERENCE_CALIBRATION as cal } from './reference-calibration';
import { sweepToCsv } from '../sweep/csv';
import { withPredictions } from './sweep-predictions';

const spec: SweepSpec = {
  topologies: [[4]],
  modes: ['fold'],
  modelBytes: 2 ** 20,
  dtype: 'f32',
  rounds: 3,
  uplinkBandwidth: 50e6,
};

function sweepCase(medianMs: number, stages: Record<string, number>): SweepCase {
  return {
    index: 0,
    topology: '1x4',
    ranksPerHost: [4],
    mode: 'fold',
    labOnly: false,
    roundsRequested: 3,
    roundsCompleted: 3,
    dataUp: { measured: [], theory: [] },
    dataDown: { measured: [], theory: [] },
    controlUp: [],
    controlDown: [],
    uplinkUpPerHost: [],
    controllerIngressPerRound: 0,
    controllerEgressPerRound: 0,
    roundMs: { median: medianMs, p90: medianMs, each: [medianMs] },
    stages: { medianMs: stages, share: {}, sumOfMediansMs: 0 },
    theoryRoundMs: null,
    memory: { enginePeakRssBytes: 0, rankPeakRssBytes: null },
    verdicts: { ok: 3, mismatch: 0, unchecked: 0 },
    verdict: 'ok',
    ended: 'all rounds completed',
  };
}

describe('a sweep case predicted', () => {
  const model = predictRound(
    {
      ranksPerHost: [4],
      mode: 'fold',
      modelBytes: 2 ** 20,
      dtype: 'f32',
      placement: 'local',
      hostNic: { bandwidth: 50e6, latencyMs: 0 },
    },
    cal,
  );
  const asModel = Object.fromEntries(model.stages.map((s) => [s.stage, s.ms]));

  it('within 25 % when shaped: no stage blamed', () => {
    const p = predictCase(spec, sweepCase(model.roundMs * 1.1, asModel), cal);
    expect(p.within).toBe(true);
    expect(p.tolerance).toBe(0.25);
    expect(p.wrongStage).toBeUndefined();
    expect(p.bottleneck.resource).toBe('hostUplink');
  });

  it('a miss names the stage the model got most wrong', () => {
    const p = predictCase(spec, sweepCase(model.roundMs * 2, { ...asModel, rankVerify: model.roundMs }), cal);
    expect(p.within).toBe(false);
    expect(p.wrongStage?.stage).toBe('rankVerify');
    expect(predictionLine(p)).toMatch(/outside 25 %: the model's rankVerify .* ms against .* measured/);
  });

  it('unshaped cases get 40 %', () => {
    const p = predictCase({ ...spec, uplinkBandwidth: undefined }, sweepCase(10, {}), cal);
    expect(p.tolerance).toBe(0.4);
  });

  it('the CSV carries the prediction columns', () => {
    const r = withPredictions(
      {
        format: 'relay-lab-sweep',
        version: 1,
        spec,
        startedAt: '',
        finishedAt: '',
        casesPlanned: 1,
        complete: true,
        cases: [sweepCase(model.roundMs, asModel)],
      },
      cal,
    );
    const [head, row] = sweepToCsv(r).trim().split('\n');
    const cols = head.split(',');
    const cells = row.split(',');
    expect(cells[cols.indexOf('predicted_bottleneck')]).toBe('uplink/hostUplink');
    expect(cells[cols.indexOf('predicted_within')]).toBe('true');
    expect(Number(cells[cols.indexOf('predicted_round_ms')])).toBeCloseTo(model.roundMs, 1);
  });
});
