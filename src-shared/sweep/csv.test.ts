// A sweep case as a CSV row: the stage columns beside the rest.
import { describe, expect, it } from 'vitest';
import type { StageSummary } from '../lab/round-stages';
import { SWEEP_CSV_COLUMNS, sweepCaseRow } from './csv';
import type { SweepCase } from './types';

const direct: StageSummary = {
  medianMs: { rankEncodeSend: 20.69, controller: 0.05, consensus: 1.13, fanOut: 0, rankVerify: 22.26 },
  share: {},
  sumOfMediansMs: 44.13,
};

describe('sweep CSV', () => {
  it('puts each stage in its own CSV column, empty where the mode has no such stage', () => {
    const c = {
      topology: '1x4',
      mode: 'direct',
      labOnly: true,
      roundsCompleted: 3,
      roundsRequested: 3,
      dataUp: { measured: [1], theory: [1] },
      dataDown: { measured: [1], theory: [1] },
      controlUp: [0],
      uplinkUpPerHost: [1],
      controllerIngressPerRound: 1,
      controllerEgressPerRound: 1,
      roundMs: { median: 45, p90: 46, each: [] },
      theoryRoundMs: null,
      memory: { enginePeakRssBytes: 1, rankPeakRssBytes: null },
      verdicts: { ok: 3, mismatch: 0, unchecked: 0 },
      verdict: 'ok',
      stages: direct,
    } as unknown as SweepCase;
    const row = sweepCaseRow(c);
    expect(row).toHaveLength(SWEEP_CSV_COLUMNS.length);
    const cell = (col: string) => row[SWEEP_CSV_COLUMNS.indexOf(col as (typeof SWEEP_CSV_COLUMNS)[number])];
    expect(cell('stage_rankVerify_ms')).toBe('22.26');
    expect(cell('stage_uplink_ms')).toBe('');
    // A sweep saved before the stages existed still writes a row of the same width.
    expect(sweepCaseRow({ ...c, stages: undefined })).toHaveLength(SWEEP_CSV_COLUMNS.length);
  });
});
