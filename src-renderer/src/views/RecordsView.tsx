// The live list of every unit on every link. The rows come from a filtered
// view over the ring (outside React state); Pause stops the display only,
// capture goes on.
//
// Rows are windowed by hand (lib/row-window.ts) rather than with
// @tanstack/react-virtual: every row has the same height, and at 20,000
// records a second the list changes every frame. The virtualizer re-measures
// every row on each count change and learns the scroll position from the
// next scroll event, one frame late, so a list that shrank (a filter, Back to
// live) could render rows for a position it no longer had: a blank list. Here
// the rows of a frame come from the scroll position the list sets in that
// same frame (one layout per frame), and rows are keyed by their place in the
// drawn window so streaming rows update text in place instead of being
// recreated or moved (see the row keys below).
import {
  memo,
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  useReducer,
  type ReactElement,
} from 'react';
import { flushSync } from 'react-dom';
import type { UnitRecord } from '@shared/lab/records';
import { useLab, recordRing, onNewRecords, send } from '../store/lab-store';
import { useUi } from '../store/ui-store';
import { FilteredView } from '../store/filtered-view';
import { tryCompileFilter, type RecordFilter } from '../lib/filter-language';
import { formatInt } from '../lib/format';
import {
  centerTop,
  clampTop,
  fillWindow,
  maxScrollTop,
  revealTop,
  rowSlots,
  rowWindow,
} from '../lib/row-window';
import { columnChoiceProps } from './ColumnChooser';
import { RecordsHead } from './RecordsHead';
import { sourceKey } from '../lib/source';
import { PICTURE_HINT, RecordCanvas } from './RecordCanvas';
import { StreamRate } from '../lib/stream-rate';
import type { PaintedRow } from '../lib/row-paint';
import { rowCells } from '../lib/record-cells';

export const ROW_HEIGHT = 22;
/** Rows drawn beyond the viewport while the person reads (scrolling shows rows already drawn). */
const OVERSCAN = 8;
/**
 * While following, the list is at its end and only new rows come in; at thousands of records a
 * second every row drawn is rewritten in every frame, so rows out of sight are pure cost (two
 * above the viewport were 4 of 27). Scrolling up stops following and the scroll handler draws the
 * new position, with the reading overscan, in that frame.
 */
const OVERSCAN_FOLLOWING = 0;

export function combinedFilter(filter: RecordFilter, followRank: number | null): RecordFilter {
  return followRank === null ? filter : (r) => r.rank === followRank && filter(r);
}

export function RecordsView() {
  const filterText = useUi((s) => s.filterText);
  const followRank = useUi((s) => s.followRank);
  const displayPaused = useUi((s) => s.displayPaused);
  const selectedSeq = useUi((s) => s.selectedSeq);
  const revealSeq = useUi((s) => s.revealSeq);
  const columns = columnChoiceProps(useUi((s) => s.hiddenColumns));
  useLab((s) => s.recordsVersion);
  const [, rerender] = useReducer((n: number) => n + 1, 0);

  const compiled = useMemo(() => tryCompileFilter(filterText), [filterText]);
  // While the text does not parse, keep showing the last filter that did.
  const [activeFilter, setActiveFilter] = useState<RecordFilter>(() => compiled.filter ?? (() => true));
  useEffect(() => {
    if (compiled.filter) setActiveFilter(() => compiled.filter);
  }, [compiled]);

  const viewRef = useRef<FilteredView | null>(null);
  if (!viewRef.current) viewRef.current = new FilteredView(() => true);
  const view = viewRef.current;
  const pausedRef = useRef(displayPaused);
  pausedRef.current = displayPaused;

  const scrollRef = useRef<HTMLDivElement>(null);
  // Follow the newest rows until the user scrolls away or selects a row (as
  // Wireshark's auto-scroll does); "Jump to latest" follows again.
  const [following, setFollowingState] = useState(true);
  const followRef = useRef(true);
  const setFollowing = (on: boolean) => {
    followRef.current = on;
    setFollowingState(on);
  };
  // A new source (a new Start, a trace opened, Back to live) starts at its newest rows: where the
  // person had parked in the old one means nothing in it. The filter is a view setting and stays.
  const source = useLab((s) => sourceKey(s.view, s.snapshot));
  useEffect(() => {
    if (!followRef.current) setFollowing(true);
  }, [source]);
  // The scroll position the list wants (set by the list itself, or read from the user's scroll).
  const topRef = useRef(0);
  // View rows trimmed from the front that the scroll position has already taken into account.
  const trimmedSeen = useRef(0);
  const [viewport, setViewport] = useState(400);
  const [listWidth, setListWidth] = useState(600);
  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    const measure = () => {
      setViewport(el.clientHeight || 400);
      setListWidth(el.clientWidth || 600);
    };
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  const headRef = useRef<HTMLDivElement>(null);
  // Rows a second coming into the view: past reading, the following list draws them on a canvas.
  const [streamRate] = useState(() => new StreamRate());

  // A filter change shows its first rows at once: the selected row if the new
  // view holds it, else the newest rows while following, else the top (never a
  // scroll position left over from a longer list).
  useEffect(() => {
    view.setPredicate(combinedFilter(activeFilter, followRank), recordRing);
    trimmedSeen.current = 0;
    // The view's rate is the filtered one: a narrower filter is judged on its own rows.
    streamRate.reset();
    const sel = selectedSeq === null ? -1 : view.indexOfSeq(selectedSeq);
    if (sel >= 0) topRef.current = centerTop(sel, view.length, ROW_HEIGHT, viewport);
    else if (!followRef.current) topRef.current = 0;
    rerender();
    // Only a new filter moves the view; selection and size changes are handled where they happen.
  }, [activeFilter, followRank, view]);

  useEffect(() => {
    if (!displayPaused) {
      view.rebuild(recordRing);
      trimmedSeen.current = 0;
      streamRate.reset();
      rerender();
    }
  }, [displayPaused, view]);

  useEffect(
    () =>
      onNewRecords((records, reset) => {
        // Clear and a new session empty the display even while it is paused.
        if (reset) {
          view.rebuild(recordRing);
          trimmedSeen.current = 0;
          streamRate.reset();
        } else if (!pausedRef.current) {
          const before = view.length + view.trimmed;
          view.append(records, recordRing, !followRef.current);
          streamRate.add(view.length + view.trimmed - before, performance.now());
        }
      }),
    [view, streamRate],
  );

  // This frame's scroll position: the newest rows while following; else the
  // person's position, moved up by the rows trimmed from the front since the
  // last frame so the rows they read stay where they are; always clamped to
  // what the list can scroll to now.
  const live = following && !displayPaused;
  const wantedTop = live
    ? maxScrollTop(view.length, ROW_HEIGHT, viewport)
    : topRef.current - (view.trimmed - trimmedSeen.current) * ROW_HEIGHT;
  const overscan = live ? OVERSCAN_FOLLOWING : OVERSCAN;
  // The rows as one picture while the list follows a stream nobody reads (RecordCanvas); the
  // rate is looked at whenever the list draws, and twice a second while it is a picture, so a
  // stream that stops gives the rows back.
  const asPicture = live && streamRate.fast(performance.now()) && canvasAvailable();
  useEffect(() => {
    if (!asPicture) return;
    const t = setInterval(rerender, 500);
    return () => clearInterval(t);
  }, [asPicture]);
  // Row keys: the row's place in the drawn window (0 at its top), and every frame draws exactly
  // `slots` rows, so every key is in use in every frame and no row is ever created, removed or
  // moved while the list streams: the rows sit in one block moved to the window's top, and each
  // row only changes its text. Following a full ring (one record in, one out) the window stays
  // put; while the view grows (the ring not yet full, a round's records at once) the window moves
  // down by the new rows each frame. Keyed by the index modulo `slots` instead (rows placed one
  // by one), that move made React reorder the rows' DOM, and every row moved was taken out of
  // layout and put back (17 of 27 rows a frame at 1,000 records a second).
  const slots = rowSlots(viewport, ROW_HEIGHT, overscan);
  const win = fillWindow(
    rowWindow(wantedTop, view.length, ROW_HEIGHT, viewport, overscan),
    view.length,
    slots,
  );

  // Apply it before paint: one layout per frame, and the rows drawn are the rows of this position.
  useLayoutEffect(() => {
    const el = scrollRef.current;
    trimmedSeen.current = view.trimmed;
    if (!el) {
      topRef.current = win.top;
      return;
    }
    const cur = el.scrollTop;
    // The person scrolled up since the last frame and its scroll event has not come yet: stop
    // following rather than scroll them back (unless the list shrank and the browser moved it).
    if (live && cur < topRef.current - 1 && topRef.current <= win.top) {
      topRef.current = cur;
      setFollowing(false);
      return;
    }
    if (Math.abs(cur - win.top) >= 1) el.scrollTop = win.top;
    // Read back: the browser may round (layout is already done by the write, so this costs nothing).
    topRef.current = el.scrollTop;
  });

  // A finding or the ladder asked to show a record. The filter may be clearing
  // in the same moment, so the request waits until the row is in the view.
  const pendingReveal = useRef<number | null>(null);
  useEffect(() => {
    if (revealSeq > 0) {
      pendingReveal.current = selectedSeq;
      rerender();
    }
  }, [revealSeq]);
  useEffect(() => {
    const seq = pendingReveal.current;
    if (seq === null) return;
    const i = view.indexOfSeq(seq);
    if (i >= 0) {
      pendingReveal.current = null;
      topRef.current = centerTop(i, view.length, ROW_HEIGHT, viewport);
      trimmedSeen.current = view.trimmed;
      setFollowing(false);
      rerender();
    }
  });

  const select = (seq: number): void => {
    // Keep the chosen row in view: stop following the newest records until "Jump to latest".
    // The position is the one drawn (`win`), so the rows trimmed since it was drawn stay counted
    // (trimmedSeen is still the drawn frame's): records that came between that frame and the
    // click trimmed a full ring's front, and taking them as seen moved the row up by as many.
    if (followRef.current) topRef.current = win.top;
    setFollowing(false);
    const at = view.indexOfSeq(seq);
    recordRing.pin(at >= 0 ? view.at(at) : undefined);
    useUi.getState().set({ selectedSeq: seq, selectedField: null, ladderPin: null });
  };

  // Units before the first row: the session's trace holds them (live: its recording; a trace: the
  // file), read back a page at a time. `earliestAsked` is the lowest seq asked for so far, so a
  // filter that matches none of a page asks for the page before it next time.
  const viewKind = useLab((s) => s.view.kind);
  const earliestAsked = useRef(Infinity);
  const [loadingEarlier, setLoadingEarlier] = useState(false);
  const [earlierNote, setEarlierNote] = useState<string | null>(null);
  useEffect(() => {
    earliestAsked.current = Infinity;
    setEarlierNote(null);
  }, [source, activeFilter, followRank]);
  const firstShown = Math.min(view.at(0)?.seq ?? Infinity, recordRing.oldestSeq, earliestAsked.current);
  const earlierCount = Number.isFinite(firstShown) ? firstShown : recordRing.notKept;
  const earlierReachable = viewKind !== 'tap';
  const showEarlier = async () => {
    if (loadingEarlier || !(earlierCount > 0)) return;
    setLoadingEarlier(true);
    setEarlierNote(null);
    const before = Number.isFinite(firstShown) ? firstShown : recordRing.sessionSeen - recordRing.size;
    const reply = await send({ type: 'earlierRecords', before });
    setLoadingEarlier(false);
    if (!reply.ok) {
      setEarlierNote(reply.message);
      return;
    }
    earliestAsked.current = reply.records.length ? reply.records[0]!.seq : 0;
    if (reply.records.length === 0) setEarlierNote('the session holds no earlier units');
    if (followRef.current) topRef.current = win.top;
    setFollowing(false);
    view.prepend(reply.records);
    // Show the earliest rows just read, at the top of the list.
    topRef.current = 0;
    trimmedSeen.current = view.trimmed;
    rerender();
  };

  // As Wireshark's "Go to last packet" with auto-scroll on: the newest units, and the list follows
  // them. A paused display is resumed (its effect rebuilds the view from the ring): jumping to the
  // latest while the list stays frozen would show nothing new, which is what it used to do.
  const jumpToLatest = () => {
    view.trim(recordRing.oldestSeq);
    trimmedSeen.current = view.trimmed;
    setFollowing(true);
    if (useUi.getState().displayPaused) useUi.getState().set({ displayPaused: false });
  };

  // One callback for every row and every frame, so a row whose record did not change skips its render.
  const selectRef = useRef(select);
  selectRef.current = select;
  const onSelect = useCallback((seq: number) => selectRef.current(seq), []);

  const rows: ReactElement[] = [];
  const painted: PaintedRow[] = [];
  for (let i = win.first; i < win.end; i++) {
    const r = view.at(i);
    if (!r) continue;
    if (asPicture) {
      painted.push({ record: r, index: i });
      continue;
    }
    rows.push(
      <RecordRow
        key={i - win.first}
        record={r}
        selected={r.seq === selectedSeq}
        index={i}
        onSelect={onSelect}
      />,
    );
  }

  return (
    <section
      aria-label="Records"
      className={`panel records ${columns.className}`}
      style={columns.style}
      data-hide={columns['data-hide']}
    >
      <RecordsHead filterText={filterText} error={compiled.error} />
      {/* One line of fixed height: counts that grow a digit, or the Jump button coming and going,
          must never wrap it and move the list (and the row a person selected) down the page. */}
      <div className="records-stats muted mono small" aria-label="Record counts">
        <span className="records-counts">
          showing {formatInt(view.length)} · kept {formatInt(recordRing.size)} of{' '}
          <span data-session-seen={recordRing.sessionSeen}>{formatInt(recordRing.sessionSeen)}</span> seen by
          the session
          {earlierReachable && earlierCount > 0 && (
            <>
              {' · '}
              <span data-earlier={earlierCount}>{formatInt(earlierCount)} earlier, on disk</span>
            </>
          )}
          {!earlierReachable &&
            recordRing.notKept > 0 &&
            ` · ${formatInt(recordRing.notKept)} counted, not kept here (a tap keeps its recent units only)`}
          {earlierNote && <span className="warn"> · {earlierNote}</span>}
          {displayPaused && <strong className="warn"> · display paused</strong>}
          {asPicture && (
            <span id="records-picture-note" title={PICTURE_HINT}>
              {' '}
              · {formatInt(Math.round(streamRate.perSecond(performance.now())))} rows/s, drawn as a picture
              <span className="visually-hidden">. {PICTURE_HINT}</span>
            </span>
          )}
        </span>
        {earlierReachable && earlierCount > 0 && (
          <button
            type="button"
            className="jump-latest"
            onClick={() => void showEarlier()}
            disabled={loadingEarlier}
            title="Read the units before the first row back from the session's trace on disk (up to 2,000 at a time)"
          >
            {loadingEarlier ? 'Reading…' : 'Show earlier ↑'}
          </button>
        )}
        {(!following || displayPaused) && (
          <button
            type="button"
            className="jump-latest"
            onClick={jumpToLatest}
            title={
              displayPaused
                ? 'Show the newest records and follow them (resumes the paused display)'
                : 'Follow the newest records again'
            }
          >
            Jump to latest ↓
          </button>
        )}
      </div>
      <div ref={headRef} className="grid-head rec-row" aria-hidden="true">
        <span>No.</span>
        <span>Time</span>
        <span>Link</span>
        <span>Dir</span>
        <span>Layer</span>
        <span>Kind</span>
        <span>Rank</span>
        <span className="num">Length</span>
        <span>Verdict</span>
        <span>Info</span>
      </div>
      <div
        ref={scrollRef}
        className="rec-scroll"
        role="grid"
        aria-label="Record list"
        aria-rowcount={view.length}
        aria-describedby={asPicture ? 'records-picture-note' : undefined}
        aria-busy={asPicture || undefined}
        tabIndex={0}
        onScroll={(e) => {
          // The list's own writes land where it put them; anything else is the person scrolling.
          // Scrolling away stops following; back to the end follows again unless a row is selected.
          const top = e.currentTarget.scrollTop;
          if (Math.abs(top - topRef.current) < 1) return;
          topRef.current = top;
          trimmedSeen.current = view.trimmed;
          const atEnd = top >= maxScrollTop(view.length, ROW_HEIGHT, viewport) - ROW_HEIGHT * 2;
          if (!atEnd && followRef.current) setFollowing(false);
          else if (atEnd && !followRef.current && useUi.getState().selectedSeq === null) setFollowing(true);
          // Draw the rows for the new position in this frame (no blank band while scrolling fast).
          flushSync(rerender);
        }}
        onKeyDown={(e) => {
          if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
          e.preventDefault();
          const cur = selectedSeq === null ? -1 : view.indexOfSeq(selectedSeq);
          const next = Math.max(0, Math.min(view.length - 1, cur + (e.key === 'ArrowDown' ? 1 : -1)));
          const rec = view.at(next);
          if (rec) {
            select(rec.seq);
            const from = clampTop(topRef.current, view.length, ROW_HEIGHT, viewport);
            topRef.current = revealTop(next, from, view.length, ROW_HEIGHT, viewport);
            trimmedSeen.current = view.trimmed;
          }
        }}
      >
        <div style={{ height: view.length * ROW_HEIGHT, position: 'relative' }}>
          {asPicture ? (
            <RecordCanvas
              rows={painted}
              top={win.first * ROW_HEIGHT}
              width={listWidth}
              height={Math.max(1, (win.end - win.first) * ROW_HEIGHT)}
              rowHeight={ROW_HEIGHT}
              selectedSeq={selectedSeq}
              styleKey={`${listWidth}|${columns.className}|${columns['data-hide'] ?? ''}`}
              headRef={headRef}
              onPick={(row) => select(row.record.seq)}
            />
          ) : (
            <div className="rec-rows" style={{ transform: `translateY(${win.first * ROW_HEIGHT}px)` }}>
              {rows}
            </div>
          )}
        </div>
      </div>
    </section>
  );
}

let canvasChecked: boolean | null = null;
/** A 2D canvas to draw on (jsdom, for one, has none): without one the rows stay DOM rows. */
function canvasAvailable(): boolean {
  if (canvasChecked === null) {
    try {
      canvasChecked =
        typeof HTMLCanvasElement !== 'undefined' && !!document.createElement('canvas').getContext('2d');
    } catch {
      canvasChecked = false;
    }
  }
  return canvasChecked;
}

// Memoised: props are a record (immutable once received), flags and numbers, so a row whose
// record, place and selection did not change is not rendered again.
const RecordRow = memo(function RecordRow({
  record: r,
  selected,
  index,
  onSelect,
}: {
  record: UnitRecord;
  selected: boolean;
  index: number;
  onSelect: (seq: number) => void;
}) {
  const cells = rowCells(r);
  return (
    <div
      role="row"
      aria-rowindex={index + 1}
      aria-selected={selected}
      data-seq={r.seq}
      data-kind={r.kind}
      className={`rec-row ${index % 2 ? 'alt' : ''} ${selected ? 'selected' : ''} ${r.verdict !== 'ok' ? 'bad-row' : ''} dir-${r.dir} layer-${r.layer}`}
      style={{ height: ROW_HEIGHT }}
      onClick={() => onSelect(r.seq)}
    >
      <span role="gridcell" className="mono">
        {cells[0]}
      </span>
      <span role="gridcell" className="mono">
        {cells[1]}
      </span>
      <span role="gridcell" className="mono">
        {cells[2]}
      </span>
      <span role="gridcell" title={r.dir} aria-label={r.dir}>
        {cells[3]}
      </span>
      <span role="gridcell" className="muted">
        {cells[4]}
      </span>
      <span role="gridcell" className="kind">
        {cells[5]}
      </span>
      <span role="gridcell" className="mono">
        {cells[6]}
      </span>
      <span role="gridcell" className="mono num">
        {cells[7]}
        {r.captured < r.length && (
          <span className="warn" title={`captured ${r.captured} of ${r.length} bytes`}>
            *
          </span>
        )}
      </span>
      <span role="gridcell" className={r.verdict === 'ok' ? 'ok' : 'bad'} title={r.verdict}>
        {cells[8]}
      </span>
      <span role="gridcell" className="info">
        {cells[9]}
      </span>
    </div>
  );
});
