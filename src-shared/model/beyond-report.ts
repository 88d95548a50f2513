// `relay-lab predict` as JSON and as text (all times in ms, bytes per round).
import type { UplinkMode } from '../lab/topology';
import type { BeyondResult } from './beyond';
import type { RoundPrediction } from './round-model';
import { formatBandwidth } from './units';

const r3 = (x: number) => Math.round(x * 1000) / 1000;

function brief(p: RoundPrediction) {
  return {
    roundMs: r3(p.roundMs),
    bottleneck: {
      stage: p.bottleneck.stage,
      resource: p.bottleneck.resource,
      ms: r3(p.bottleneck.ms),
      what: p.bottleneck.what,
    },
  };
}

export function beyondJson(r: BeyondResult, calibration: string) {
  return {
    format: 'relay-lab-predict',
    version: 1,
    calibration,
    input: r.input,
    frameBytes: r.modes[0]?.prediction.frameBytes,
    modes: Object.fromEntries(
      r.modes.map((m) => [
        m.mode,
        {
          ...brief(m.prediction),
          stagesMs: Object.fromEntries(m.prediction.stages.map((s) => [s.stage, r3(s.ms)])),
          stages: m.prediction.stages.map((s) => ({
            stage: s.stage,
            ms: r3(s.ms),
            boundBy: s.boundBy,
            terms: s.terms.map((t) => ({ ...t, ms: r3(t.ms) })),
          })),
          nicBytesPerRound: m.prediction.nicBytes,
          controllerNicToMove: m.controllerNicToMove === null ? null : Math.round(m.controllerNicToMove),
          afterMove: m.afterMove ? brief(m.afterMove) : null,
          curve: m.curve.map((c) => ({ ...c, roundMs: r3(c.roundMs) })),
          moves: m.moves,
        },
      ]),
    ) as Record<UplinkMode, unknown>,
    lead: Object.fromEntries(Object.entries(r.lead).map(([k, v]) => [k, r3(v)])),
    leadAfterMove: Object.fromEntries(Object.entries(r.leadAfterMove).map(([k, v]) => [k, r3(v)])),
  };
}

const fmtMs = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(x >= 100 ? 0 : 2)} ms`);
const fmtBytes = (b: number) =>
  b >= 2 ** 30
    ? `${(b / 2 ** 30).toFixed(2)} GiB`
    : b >= 2 ** 20
      ? `${(b / 2 ** 20).toFixed(2)} MiB`
      : `${b} B`;

export function beyondText(r: BeyondResult, calibration: string): string {
  const i = r.input;
  const out = [
    `${i.hosts} hosts x ${i.ranksPerHost} ranks, ${fmtBytes(i.modelBytes)} model (${i.dtype}); host NIC ${formatBandwidth(i.hostNic.bandwidth)} + ${i.hostNic.latencyMs} ms, controller NIC ${formatBandwidth(i.controllerNic.bandwidth)} + ${i.controllerNic.latencyMs} ms`,
    `calibration: ${calibration}`,
    '',
  ];
  for (const m of r.modes) {
    const p = m.prediction;
    const n = p.nicBytes;
    out.push(
      `${m.mode}: round ${fmtMs(p.roundMs)} (${p.roundMs.toFixed(3)} ms), bottleneck ${p.bottleneck.resource} in ${p.bottleneck.stage} (${fmtMs(p.bottleneck.ms)}: ${p.bottleneck.what})`,
      `  per round: each host NIC up ${fmtBytes(n.hostUp)}, down ${fmtBytes(n.hostDown)}; controller NIC in ${fmtBytes(n.controllerIn)}, out ${fmtBytes(n.controllerOut)}`,
      `  stages: ${p.stages.map((s) => `${s.stage} ${fmtMs(s.ms)}`).join(' · ')}`,
    );
    if (m.controllerNicToMove !== null && m.afterMove)
      out.push(
        `  a controller NIC above ${formatBandwidth(m.controllerNicToMove)} moves the bottleneck to ${m.afterMove.bottleneck.resource} (round ${fmtMs(m.afterMove.roundMs)})`,
      );
    const marks = new Set(m.moves.map((x) => x.hosts));
    out.push(
      `  round against hosts: ${m.curve.map((c) => `${c.hosts}: ${fmtMs(c.roundMs)}${marks.has(c.hosts) ? ` [-> ${c.resource}]` : ''}`).join(', ')}`,
    );
  }
  for (const [mode, lead] of Object.entries(r.lead))
    out.push(
      `fold's lead over ${mode}: ${lead.toFixed(2)}x (K = ${i.ranksPerHost})` +
        (r.leadAfterMove[mode as UplinkMode] !== undefined
          ? `; with a controller NIC fast enough for both: ${r.leadAfterMove[mode as UplinkMode]!.toFixed(2)}x`
          : ''),
    );
  return out.join('\n') + '\n';
}
