// A sweep as a terminal table (and the README's): one line per case with the
// data-channel bytes per host uplink per round beside the theory, controller
// traffic, round times and verdicts.
import type { SweepCase, SweepResult } from '@shared/sweep/types';
import { foldBenefit } from '@shared/sweep/summary';
import { stageMedians } from '@shared/lab/round-stages';
import { predictionLine } from '@shared/model/validate-case';

const kb = (b: number) => (b >= 10_240 ? `${(b / 1024).toFixed(1)} KiB` : `${Math.round(b)} B`);
const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

/** Per-host list shortened when every host is the same. */
function hosts(xs: number[], f: (x: number) => string): string {
  if (xs.length === 0) return '-';
  return xs.every((x) => x === xs[0]) ? f(xs[0]) : xs.map(f).join(' / ');
}

/** `=` when every host's measured bytes equal the theory, else the difference. */
export function theoryMatch(c: SweepCase): string {
  const m = c.dataUp.measured;
  if (m.length === 0) return '-';
  const diff = m.map((x, h) => x - c.dataUp.theory[h]);
  return diff.every((x) => x === 0) ? '=' : `off by ${diff.map((x) => Math.round(x)).join('/')}`;
}

export function sweepTable(r: SweepResult): string {
  const head = [
    'topology',
    'mode',
    'data up/host/round',
    'theory',
    'match',
    'ctrl up/host',
    'ctrl in/round',
    'ctrl out/round',
    'median ms',
    'p90 ms',
    'rounds ok',
    'verdict',
  ];
  const predicted = r.cases.some((c) => c.predicted);
  if (predicted) head.push('predicted ms', 'error');
  const rows = r.cases.map((c) => [
    c.topology,
    c.mode + (c.labOnly ? '*' : ''),
    hosts(c.dataUp.measured, kb),
    hosts(c.dataUp.theory, kb),
    theoryMatch(c),
    hosts(c.controlUp, kb),
    kb(c.controllerIngressPerRound),
    kb(c.controllerEgressPerRound),
    ms(c.roundMs.median),
    ms(c.roundMs.p90),
    `${c.verdicts.ok}/${c.roundsRequested}`,
    c.error ? `error: ${c.error}` : c.verdict,
    ...(predicted
      ? [
          c.predicted ? ms(c.predicted.roundMs) : '-',
          c.predicted?.error == null
            ? '-'
            : `${c.predicted.error >= 0 ? '+' : ''}${Math.round(c.predicted.error * 100)} %`,
        ]
      : []),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => `| ${cells.map((x, i) => x.padEnd(widths[i])).join(' | ')} |`;
  const out = [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)];
  const s = r.spec;
  const shaping = s.uplinkBandwidth
    ? `each host uplink shaped to ${s.uplinkBandwidth} B/s per direction${s.uplinkLatencyMs ? ` + ${s.uplinkLatencyMs} ms` : ''}`
    : s.uplinkLatencyMs
      ? `each host uplink delayed ${s.uplinkLatencyMs} ms`
      : 'uplinks unshaped (loopback)';
  out.push(
    '',
    `${s.modelBytes} B model, ${s.dtype}, ${s.rounds} rounds per case (after ${warmupText(r)} left out), ${shaping}. * lab-only mode (flodl 0.7 has only fold).`,
  );
  const benefit = foldBenefit(r);
  if (benefit) out.push(benefit);
  const stages = r.cases.filter((c) => c.stages).map(stageLine);
  if (stages.length) out.push('', 'Where a round goes (medians, ms, on the critical path):', ...stages);
  const predictions = r.cases.filter((c) => c.predicted);
  if (predictions.length)
    out.push(
      '',
      'The round model (docs/model.md; shaped within 25 %, unshaped within 40 %):',
      ...predictions.map((c) => `  ${c.topology} ${c.mode}: ${predictionLine(c.predicted!)}`),
    );
  if (!r.complete) out.push(`stopped (${r.stoppedBy}) after ${r.cases.length} of ${r.casesPlanned} cases`);
  return out.join('\n') + '\n';
}

/** `1x4 fold: rankEncodeSend 1.9 · uplink 5.6 · ...` (the stages the case's mode has). */
function stageLine(c: SweepCase): string {
  const parts = stageMedians(c.stages).map((m) => `${m.stage} ${m.ms.toFixed(2)}`);
  return `  ${c.topology} ${c.mode}: ${parts.join(' · ')}`;
}

/** The warm-up as run: a count, or the counts the 'auto' warm-up took (each case's). */
function warmupText(r: SweepResult): string {
  const w = r.spec.warmupRounds ?? 0;
  if (w !== 'auto') return `${w} warm-up rounds`;
  const ran = [...new Set(r.cases.map((c) => c.warmupRounds ?? 0))].sort((a, b) => a - b);
  const counts =
    ran.length === 0 ? 'none run yet' : ran.length === 1 ? `${ran[0]}` : `${ran[0]}-${ran[ran.length - 1]}`;
  return `an auto warm-up of ${counts} rounds`;
}
