// A sweep as CSV: one row per case, per-host lists joined with ';' so a
// spreadsheet keeps one cell per field. The JSON form is the full record.
import type { SweepCase, SweepResult } from './types';
import { ROUND_STAGES } from '../lab/round-stages';

export const SWEEP_CSV_COLUMNS = [
  'topology',
  'mode',
  'lab_only',
  'rounds',
  'data_up_per_host_measured',
  'data_up_per_host_theory',
  'data_down_per_host_measured',
  'data_down_per_host_theory',
  'control_up_per_host',
  'uplink_up_per_host',
  'controller_ingress_per_round',
  'controller_egress_per_round',
  'round_ms_median',
  'round_ms_p90',
  'theory_round_ms',
  'engine_peak_rss_bytes',
  'rank_peak_rss_bytes',
  'rounds_ok',
  'rounds_mismatch',
  'verdict',
  'trace',
  // Where a round's time goes: each stage's median ms (empty where the mode has no such stage).
  ...ROUND_STAGES.map((s) => `stage_${s}_ms` as const),
  // The round model's prediction (sweep --predict; empty without): docs/model.md.
  'predicted_round_ms',
  'predicted_error',
  'predicted_bottleneck',
  'predicted_within',
  'model_wrong_stage',
] as const;

const list = (xs: number[]) => xs.map((x) => round2(x)).join(';');
const round2 = (x: number) => Math.round(x * 100) / 100;

function cell(v: string | number | boolean | null | undefined): string {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function sweepCaseRow(c: SweepCase): string[] {
  return [
    c.topology,
    c.mode,
    String(c.labOnly),
    `${c.roundsCompleted}/${c.roundsRequested}`,
    list(c.dataUp.measured),
    list(c.dataUp.theory),
    list(c.dataDown.measured),
    list(c.dataDown.theory),
    list(c.controlUp),
    list(c.uplinkUpPerHost),
    String(round2(c.controllerIngressPerRound)),
    String(round2(c.controllerEgressPerRound)),
    String(round2(c.roundMs.median)),
    String(round2(c.roundMs.p90)),
    c.theoryRoundMs === null ? '' : String(round2(c.theoryRoundMs)),
    String(c.memory.enginePeakRssBytes),
    c.memory.rankPeakRssBytes === null ? '' : String(c.memory.rankPeakRssBytes),
    String(c.verdicts.ok),
    String(c.verdicts.mismatch),
    c.error ? `error: ${c.error}` : c.verdict,
    c.trace ?? '',
    ...ROUND_STAGES.map((s) => {
      const ms = c.stages?.medianMs[s];
      return ms === undefined ? '' : String(round2(ms));
    }),
    ...predictionCells(c),
  ];
}

export function sweepToCsv(result: SweepResult): string {
  const lines = [SWEEP_CSV_COLUMNS.join(',')];
  for (const c of result.cases) lines.push(sweepCaseRow(c).map(cell).join(','));
  return lines.join('\n') + '\n';
}

function predictionCells(c: SweepCase): string[] {
  const p = c.predicted;
  if (!p) return ['', '', '', '', ''];
  return [
    String(p.roundMs),
    p.error === null ? '' : String(p.error),
    `${p.bottleneck.stage}/${p.bottleneck.resource}`,
    p.within === null ? '' : String(p.within),
    p.wrongStage ? `${p.wrongStage.stage} ${p.wrongStage.predictedMs}/${p.wrongStage.measuredMs}` : '',
  ];
}
