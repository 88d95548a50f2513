// Summarises a run's trace into what the reproduction dialog draws
// (RunPicture): units sampled onto one lane per link, kills/faults as marks,
// round ends, and the decisive unit: the first unit the codec rejected; else
// the unit a warning or error finding points at (a DeclareDead, a rejected
// frame); else the first unit after the first fault; else the last unit.
import type { DecisiveUnit, PictureUnit, RunPicture } from '@shared/repro';
import { MAX_PICTURE_UNITS } from '@shared/repro';
import type { UnitRecord } from '@shared/lab/records';
import { loadTraceFile } from '../lab/trace/ndjson';
import type { TraceEvent } from '../lab/trace/format';

function unitLabel(r: UnitRecord): string {
  return `#${r.seq} ${r.summary || r.kind} on ${r.link} ${r.dir}`;
}

/** A decisive unit the run named itself (a socket scenario: the reader's view). */
export type PreferredUnit = Pick<DecisiveUnit, 'seq' | 'why' | 'mark'>;

export function pictureOfEvents(
  events: readonly TraceEvent[],
  trace?: string,
  prefer?: PreferredUnit,
): RunPicture {
  const lanes: string[] = [];
  const lane = (id: string) => {
    let i = lanes.indexOf(id);
    if (i < 0) i = lanes.push(id) - 1;
    return i;
  };
  const records: UnitRecord[] = [];
  const marks: RunPicture['marks'] = [];
  const rounds: RunPicture['rounds'] = [];
  let findingSeq: { seq: number; message: string } | null = null;
  let firstFaultT: number | null = null;
  let duration = 0;
  for (const e of events) {
    duration = Math.max(duration, e.t);
    if (e.type === 'record') records.push(e.record);
    else if (e.type === 'round') rounds.push({ round: e.report.round, t: e.t, verdict: e.report.verdict });
    else if (e.type === 'lifecycle' && e.action !== 'linkClosed' && e.action !== 'start') {
      const who =
        e.rank !== undefined
          ? ` rank ${e.rank}`
          : e.host !== undefined
            ? ` h${e.host}`
            : e.link
              ? ` ${e.link}`
              : '';
      marks.push({ t: e.t, label: `${e.action}${who}${e.fault ? ` ${e.fault.kind}` : ''}` });
      if (e.action !== 'stop') firstFaultT ??= e.t;
    } else if (e.type === 'finding' && e.finding.kind === 'fault') {
      // A headless run's schedule (kill, pause, link fault at a round) shows as its fault findings.
      marks.push({ t: e.t, label: e.finding.message.replace(/^fault: /, '') });
      firstFaultT ??= e.t;
    } else if (
      e.type === 'finding' &&
      !findingSeq &&
      e.finding.severity !== 'info' &&
      e.finding.recordSeq !== undefined
    )
      findingSeq = { seq: e.finding.recordSeq, message: e.finding.message };
  }
  for (const r of records) lane(r.link);
  const bySeq = new Map(records.map((r) => [r.seq, r]));
  let pick: { r: UnitRecord; why: string } | null = null;
  if (prefer && bySeq.has(prefer.seq)) pick = { r: bySeq.get(prefer.seq)!, why: prefer.why };
  const bad = records.find((r) => r.verdict !== 'ok');
  if (bad && !pick) pick = { r: bad, why: `the first unit the codec rejected (${bad.verdict})` };
  else if (!pick && findingSeq && bySeq.has(findingSeq.seq))
    pick = { r: bySeq.get(findingSeq.seq)!, why: `the unit of the first finding: ${findingSeq.message}` };
  else if (!pick && firstFaultT !== null) {
    const after = records.find((r) => r.t >= firstFaultT!);
    if (after) pick = { r: after, why: 'the first unit after the first fault' };
  }
  if (!pick && records.length) pick = { r: records.at(-1)!, why: 'the last unit of the run' };
  const decisive: DecisiveUnit | undefined = pick
    ? {
        seq: pick.r.seq,
        t: pick.r.t,
        lane: lane(pick.r.link),
        label: unitLabel(pick.r),
        why: pick.why,
        ...(prefer && prefer.seq === pick.r.seq && prefer.mark ? { mark: prefer.mark } : {}),
      }
    : undefined;
  // An even sample of the units, the decisive one always in it.
  const step = Math.max(1, Math.ceil(records.length / MAX_PICTURE_UNITS));
  const units: PictureUnit[] = records
    .filter((r, i) => i % step === 0 || r.seq === decisive?.seq || r.verdict !== 'ok')
    .slice(0, MAX_PICTURE_UNITS + 8)
    .map((r) => ({
      seq: r.seq,
      t: r.t,
      lane: lane(r.link),
      dir: r.dir,
      kind: r.kind,
      ok: r.verdict === 'ok',
    }));
  return { trace, durationMs: duration, lanes, units, records: records.length, marks, rounds, decisive };
}

/** The picture of a trace file (`trace`: its name in the traces folder). */
export async function pictureOfTrace(
  file: string,
  trace?: string,
  prefer?: PreferredUnit,
): Promise<RunPicture> {
  const loaded = await loadTraceFile(file);
  return pictureOfEvents(loaded.events, trace, prefer);
}
