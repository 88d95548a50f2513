// One run of a reproduction as a picture: a timeline with one lane per link,
// each unit a tick (rejected ones red), kills and faults as dashed marks,
// round ends on the axis, and the decisive unit ringed and named. "Inspect"
// opens the run's trace in the main window at that unit.
import type { RunPicture } from '@shared/repro/picture';
import { inspectRun, useRepro } from '../store/repro-store';
import { formatDuration, plural } from '../lib/format';
import { monoWidth, placeLabels } from '../lib/label-lanes';
import './repro.css';

const W = 520;
const LEFT = 96;
const LANE = 12;
const TOP = 16;
/** The labels' font size (repro.css). */
const LABEL_PX = 8;
/** Rows for the marks' labels under the lanes. */
const MARK_ROWS = 2;

export function RunPictureView({ picture: p, label }: { picture: RunPicture; label: string }) {
  const busy = useRepro((s) => s.busy);
  const lanes = p.lanes.length;
  const span = Math.max(1, p.durationMs);
  const x = (t: number) => LEFT + ((W - LEFT - 8) * Math.max(0, t)) / span;
  const y = (lane: number) => TOP + lane * LANE + LANE / 2;
  const d = p.decisive;
  // Labels that would print over each other (a kill, a pause and a resume inside one stalled round;
  // rounds 50 ms apart) go to a second row, or are left to their line's tooltip.
  const roundLabels = new Set(
    placeLabels(
      p.rounds.map((r) => x(r.t)),
      p.rounds.map((r) => monoWidth(String(r.round), LABEL_PX)),
      1,
      'middle',
    ).map((l) => l.index),
  );
  const markRows = new Map(
    placeLabels(
      p.marks.map((m) => x(m.t) + 2),
      p.marks.map((m) => monoWidth(m.label, LABEL_PX)),
      MARK_ROWS,
    ).map((l) => [l.index, l.row]),
  );
  const markRowsUsed = Math.max(1, ...[...markRows.values()].map((r) => r + 1));
  const lanesBottom = TOP + Math.max(1, lanes) * LANE;
  const h = lanesBottom + 8 + markRowsUsed * 10;
  return (
    <figure className="run-picture" aria-label={`${label} picture`}>
      {p.records === 0 ? (
        <p className="muted small">{p.note ?? 'no units were recorded'}</p>
      ) : (
        <svg viewBox={`0 0 ${W} ${h}`} width="100%" role="img" aria-label={`${label} timeline`}>
          {p.lanes.map((id, i) => (
            <g key={id}>
              <line className="lane" x1={LEFT} x2={W - 4} y1={y(i)} y2={y(i)} />
              <text className="lane-label" x={LEFT - 4} y={y(i) + 3} textAnchor="end">
                {id}
              </text>
            </g>
          ))}
          {p.rounds.map((r, i) => (
            <g key={`r${r.round}`}>
              <line className={`round-end ${r.verdict}`} x1={x(r.t)} x2={x(r.t)} y1={TOP - 6} y2={TOP - 1}>
                <title>{`round ${r.round} ${r.verdict}`}</title>
              </line>
              {roundLabels.has(i) && (
                <text className="round-label" x={x(r.t)} y={TOP - 8} textAnchor="middle">
                  {r.round}
                </text>
              )}
            </g>
          ))}
          {p.marks.map((m, i) => {
            const row = markRows.get(i);
            return (
              <g key={`m${i}`}>
                <line className="mark" x1={x(m.t)} x2={x(m.t)} y1={TOP} y2={lanesBottom + (row ?? 0) * 10}>
                  <title>{m.label}</title>
                </line>
                {row !== undefined && (
                  <text className="mark-label" x={x(m.t) + 2} y={lanesBottom + 8 + row * 10}>
                    {m.label}
                  </text>
                )}
              </g>
            );
          })}
          {p.units.map((u) => (
            <rect
              key={u.seq}
              className={`unit ${u.ok ? 'ok' : 'bad'} ${u.dir}`}
              x={x(u.t) - 1}
              y={y(u.lane) - (u.dir === 'up' ? 4 : 1)}
              width={2}
              height={5}
            >
              <title>{`#${u.seq} ${u.kind} ${u.dir}`}</title>
            </rect>
          ))}
          {d && (
            <circle className="decisive" cx={x(d.t)} cy={y(d.lane)} r={6}>
              <title>{d.label}</title>
            </circle>
          )}
        </svg>
      )}
      {d && (
        <figcaption className="small">
          <strong>Decisive unit</strong> <span className="mono">{d.label}</span>: {d.why}.{' '}
          {d.mark && (
            <span>
              Marked: bytes {d.mark.offset}–{d.mark.offset + d.mark.length - 1} ({d.mark.label}).{' '}
            </span>
          )}
          <button
            type="button"
            onClick={() => void inspectRun(p)}
            disabled={busy !== null || !p.trace}
            aria-label={`Inspect ${label}`}
            title="Open this run's trace in the main window at the decisive unit"
          >
            Inspect
          </button>
        </figcaption>
      )}
      {/* The run's one duration in the dialog: its trace's span, the time the timeline draws. */}
      <p className="muted small" aria-label={`${label} duration`}>
        {plural(p.records, 'unit')} on {plural(p.lanes.length, 'link')} ·{' '}
        <span title="from the start of the run's trace to its last event: the span the timeline draws">
          traced for {formatDuration(p.durationMs)}
        </span>
        {p.units.length < p.records ? ` · ${p.units.length} drawn` : ''}
      </p>
    </figure>
  );
}
