// A sequence diagram of a round (the selected unit's, the stalled one or the latest
// complete one, lib/ladder.ts ladderFocus): ranks, relays and the controller as
// lanes, each record an arrow in order. Clicking an arrow inspects it.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { UnitRecord } from '@shared/lab/records';
import { useLab, recordRing } from '../store/lab-store';
import { useUi } from '../store/ui-store';
import {
  arrowWindow,
  buildLadder,
  ladderFocus,
  laneWidth,
  roundOfSeq,
  type Ladder,
  type LadderFocus,
} from '../lib/ladder';
import { currentStall, lastCompletedRound, stallRound } from '../lib/stalls';
import { ladderKeySeq } from '../lib/pane-keys';
import { READOUT_MS, useSampled } from '../lib/use-sampled';

/** The widest lane (lib/ladder.ts laneWidth narrows it to fit the pane). */
const LANE_W = 46;
const ROW_H = 16;
const TOP = 26;
/** Arrows drawn beyond the part of the body in view, each side (scrolling shows arrows already drawn). */
const OVERSCAN = 8;

/** Index in the ring of the unit `seq` (units arrive in seq order: a binary search), or -1. */
function ringIndexOf(seq: number): number {
  let lo = 0;
  let hi = recordRing.size - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const r = recordRing.at(mid)!;
    if (r.seq === seq) return mid;
    if (r.seq < seq) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** Units of the ring from index `from` (clamped) up to, not including, `end`. */
function unitsBetween(from: number, end: number): UnitRecord[] {
  const out: UnitRecord[] = [];
  for (let i = Math.max(0, from); i < Math.min(recordRing.size, end); i++) out.push(recordRing.at(i)!);
  return out;
}

const WHY: Record<LadderFocus['why'], string> = {
  finding: "the finding's",
  selected: "the selected unit's",
  stalled: 'stalled, in flight',
  // Redrawn twice a second: at full speed rounds run ahead of it, so it never claims the latest.
  latest: 'complete · redrawn 2×/s',
};

export function LadderView() {
  const snapshot = useLab((s) => s.snapshot);
  const selectedSeq = useUi((s) => s.selectedSeq);
  const pin = useUi((s) => s.ladderPin);
  const [count, setCount] = useState(1);
  // At full speed rounds finish many times a second: read the rounds twice a second, on the
  // readout clock, without re-rendering on the store's changes in between.
  const completed = useSampled(useLab, (s) => lastCompletedRound(s.rounds, s.snapshot), READOUT_MS);
  const stalledRound = useSampled(
    useLab,
    (s) => {
      const stall = currentStall(s.findings, lastCompletedRound(s.rounds, s.snapshot));
      return stall ? stallRound(stall) : null;
    },
    READOUT_MS,
  );
  // The ladder follows what the person looks at (lib/ladder.ts ladderFocus): the selected unit's
  // round (a list click, a finding, a tour step), the stalled round, or the latest complete one.
  const selectedIndex = selectedSeq === null ? -1 : ringIndexOf(selectedSeq);
  const selectedRound =
    selectedIndex < 0 ? null : roundOfSeq(unitsBetween(selectedIndex - 300, selectedIndex + 1), selectedSeq!);
  const findingRound = pin !== null && pin.seq === selectedSeq ? pin.round : null;
  const focus = ladderFocus({ selectedRound, findingRound, stalledRound, lastCompleted: completed });
  // A round still in flight (a stall, a selected unit of the current round) gains arrows as units
  // arrive: redraw on the readout clock then; a complete round is drawn once.
  const inFlight = focus !== null && focus.round > completed;
  const inFlightRef = useRef(inFlight);
  inFlightRef.current = inFlight;
  const version = useSampled(useLab, (s) => (inFlightRef.current ? s.recordsVersion : 0), READOUT_MS);
  const ladder = useMemo(() => {
    if (!snapshot || !focus) return null;
    const anchor =
      focus.why === 'selected' || (focus.why === 'finding' && selectedIndex >= 0)
        ? selectedIndex
        : recordRing.size - 1;
    return buildLadder(unitsBetween(anchor - 3000, anchor + 3000), snapshot, count, 150 * count, focus.round);
  }, [snapshot?.startedAt, snapshot?.hosts.length, focus?.round, focus?.why, count, inFlight ? version : 0]);

  // Only the arrows in view are drawn (lib/ladder.ts arrowWindow): the body's scroll position and
  // height, kept as the window they give, so scrolling within it does not re-render.
  const bodyRef = useRef<HTMLDivElement>(null);
  const [body, setBody] = useState({ top: 0, height: 400 });
  // Lanes fit the pane's width where they stay readable (every lane, ctl too, on screen at 1440 wide).
  const [bodyWidth, setBodyWidth] = useState(0);
  const arrows = ladder?.arrows.length ?? 0;
  const win = arrowWindow(body.top, body.height, arrows, TOP, ROW_H, OVERSCAN);
  const readBody = () => {
    const el = bodyRef.current;
    if (!el) return;
    const next = { top: el.scrollTop, height: el.clientHeight || 400 };
    setBody((prev) => {
      const a = arrowWindow(prev.top, prev.height, arrows, TOP, ROW_H, OVERSCAN);
      const b = arrowWindow(next.top, next.height, arrows, TOP, ROW_H, OVERSCAN);
      return a.first === b.first && a.end === b.end ? prev : next;
    });
  };
  const readBodyRef = useRef(readBody);
  readBodyRef.current = readBody;
  useLayoutEffect(() => {
    const el = bodyRef.current;
    if (!el) return;
    const ro = new ResizeObserver(() => {
      readBodyRef.current();
      setBodyWidth(el.clientWidth);
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const diagram = useMemo(
    () =>
      ladder && (
        <LadderDiagram
          ladder={ladder}
          selectedSeq={selectedSeq}
          first={win.first}
          end={win.end}
          laneW={bodyWidth ? laneWidth(bodyWidth, ladder.lanes.length) : LANE_W}
          round={focus?.round}
        />
      ),
    [ladder, selectedSeq, win.first, win.end, bodyWidth, focus?.round],
  );

  // The selected arrow stays in view (keyboard steps, a list selection, a redraw): scrolled to
  // when it is not drawn, then brought into view once it is. The person's own scrolling (which
  // moves the drawn window) is left alone.
  const revealPending = useRef(false);
  useEffect(() => {
    const el = bodyRef.current;
    const j = ladder?.arrows.findIndex((a) => a.seq === selectedSeq) ?? -1;
    if (!el || j < 0) return;
    const y = TOP + j * ROW_H;
    if (y < el.scrollTop) el.scrollTop = y;
    else if (y + ROW_H > el.scrollTop + el.clientHeight) el.scrollTop = y + ROW_H - el.clientHeight;
    revealPending.current = true;
  }, [selectedSeq, ladder]);
  useEffect(() => {
    if (!revealPending.current) return;
    const arrow = bodyRef.current?.querySelector('.arrow.selected');
    if (!arrow) return;
    revealPending.current = false;
    arrow.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }, [selectedSeq, ladder, win.first]);

  return (
    <section aria-label="Ladder" className="panel ladder">
      <header className="panel-head">
        <h2>Ladder</h2>
        <span className="muted small">
          {!focus
            ? 'no round yet'
            : `${count === 1 ? `round ${focus.round}` : `rounds ${Math.max(0, focus.round - count + 1)}–${focus.round}`} · ${WHY[focus.why]}`}
        </span>
        <div className="segmented push-right" role="group" aria-label="Rounds shown">
          {[1, 2, 3].map((n) => (
            <button
              key={n}
              type="button"
              aria-pressed={count === n}
              onClick={() => setCount(n)}
              title={`${n} round${n > 1 ? 's' : ''}, ending at the round shown`}
            >
              {n}
            </button>
          ))}
        </div>
      </header>
      <div
        className="panel-body ladder-body"
        ref={bodyRef}
        onScroll={readBody}
        tabIndex={0}
        title="↑ ↓ the previous or next arrow (its record is selected in the list and the inspector)"
        onKeyDown={(e) => {
          const seq = ladderKeySeq(ladder?.arrows.map((a) => a.seq) ?? [], selectedSeq, e.key);
          if (seq === null) return;
          e.preventDefault();
          useUi.getState().set({
            selectedSeq: seq,
            selectedField: null,
            revealSeq: useUi.getState().revealSeq + 1,
          });
        }}
      >
        {diagram}
      </div>
    </section>
  );
}

/**
 * The diagram itself, memoised on the ladder, the selection and the arrows in
 * view: the view re-renders on every round and snapshot (its heading), and
 * the arrows rebuilt and compared each time would be spent for nothing
 * between redraws. The SVG keeps the whole ladder's height; arrows `first` to
 * `end` are drawn.
 */
function LadderDiagram({
  ladder,
  selectedSeq,
  first,
  end,
  laneW,
  round,
}: {
  ladder: Ladder;
  selectedSeq: number | null;
  first: number;
  end: number;
  laneW: number;
  round?: number;
}) {
  const LANE_W = laneW;
  // The round each arrow follows, so a divider goes where a new round's first arrow is.
  let prevRound: number | undefined;
  for (let j = first - 1; j >= 0 && prevRound === undefined; j--) prevRound = ladder.arrows[j].round;
  return (
    <svg
      width={ladder.lanes.length * LANE_W + 20}
      height={TOP + ladder.arrows.length * ROW_H + 10}
      role="img"
      aria-label={round === undefined ? 'Sequence diagram' : `Sequence diagram of round ${round}`}
    >
      {ladder.lanes.map((name, i) => (
        <g key={name}>
          <text x={10 + i * LANE_W + LANE_W / 2} y={14} textAnchor="middle" className="lane-name">
            {name}
          </text>
          <line
            x1={10 + i * LANE_W + LANE_W / 2}
            x2={10 + i * LANE_W + LANE_W / 2}
            y1={20}
            y2={TOP + ladder.arrows.length * ROW_H}
            className="lane"
          />
        </g>
      ))}
      {ladder.arrows.slice(first, end).map((a, k) => {
        const j = first + k;
        // A new round starts where the first arrow carrying its number appears.
        const startsRound = a.round !== undefined && a.round !== prevRound && j > 0;
        if (a.round !== undefined) prevRound = a.round;
        const x1 = 10 + a.from * LANE_W + LANE_W / 2;
        const x2 = 10 + a.to * LANE_W + LANE_W / 2;
        const y = TOP + j * ROW_H + ROW_H / 2;
        const dirSign = x2 > x1 ? 1 : -1;
        return (
          <g
            // By position: a redraw (a new round) updates the arrows in place instead of
            // replacing every SVG node (150 removed and 150 added per redraw before).
            key={j}
            className={`arrow ${a.bad ? 'bad' : ''} ${a.seq === selectedSeq ? 'selected' : ''}`}
            onClick={() =>
              useUi.getState().set({
                selectedSeq: a.seq,
                selectedField: null,
                revealSeq: useUi.getState().revealSeq + 1,
              })
            }
          >
            <title>{`#${a.seq} ${a.kind}${a.round !== undefined ? ` round ${a.round}` : ''}`}</title>
            {startsRound && (
              <>
                <line
                  className="round-divider"
                  x1={0}
                  x2={ladder.lanes.length * LANE_W + 20}
                  y1={y - ROW_H / 2}
                  y2={y - ROW_H / 2}
                />
                <text className="round-label" x={2} y={y - ROW_H / 2 + 9}>
                  round {a.round}
                </text>
              </>
            )}
            <line x1={x1} x2={x2 - dirSign * 4} y1={y} y2={y} />
            <polygon points={`${x2},${y} ${x2 - dirSign * 6},${y - 3} ${x2 - dirSign * 6},${y + 3}`} />
            <text x={(x1 + x2) / 2} y={y - 2} textAnchor="middle">
              {a.kind}
            </text>
          </g>
        );
      })}
    </svg>
  );
}
