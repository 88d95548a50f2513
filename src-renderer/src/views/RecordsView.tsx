// The live list of every unit on every link. The rows come from a filtered
// view over the ring (outside React state) and are virtualised; Pause stops
// the display only, capture goes on.
import { useEffect, useMemo, useRef, useState, useReducer } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { UnitRecord } from '@shared/lab/records';
import { useLab, recordRing, onNewRecords, clearRecords } from '../store/lab-store';
import { useUi } from '../store/ui-store';
import { FilteredView } from '../store/filtered-view';
import { tryCompileFilter, type RecordFilter } from '../lib/filter-language';
import { formatInt, formatTime } from '../lib/format';
import { FilterCompletions } from './FilterCompletions';
import { ColumnChooser, columnChoiceProps } from './ColumnChooser';

const ROW_HEIGHT = 22;

export function combinedFilter(filter: RecordFilter, followRank: number | null): RecordFilter {
  return followRank === null ? filter : (r) => r.rank === followRank && filter(r);
}

export function RecordsView() {
  const filterText = useUi((s) => s.filterText);
  const followRank = useUi((s) => s.followRank);
  const displayPaused = useUi((s) => s.displayPaused);
  const selectedSeq = useUi((s) => s.selectedSeq);
  const revealSeq = useUi((s) => s.revealSeq);
  const ranks = useLab((s) => s.snapshot?.ranks);
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

  // A filter change shows its first rows at once: the selected row if the new
  // view holds it, else the newest rows while following, else the top (never a
  // scroll position left over from a longer list).
  const filterChanged = useRef(false);
  useEffect(() => {
    view.setPredicate(combinedFilter(activeFilter, followRank), recordRing);
    filterChanged.current = true;
    rerender();
  }, [activeFilter, followRank, view]);

  useEffect(() => {
    if (!displayPaused) {
      view.rebuild(recordRing);
      rerender();
    }
  }, [displayPaused, view]);

  const scrollRef = useRef<HTMLDivElement>(null);
  // Follow the newest rows until the user scrolls away or selects a row (as
  // Wireshark's auto-scroll does); "Jump to latest" follows again.
  const [following, setFollowingState] = useState(true);
  const stickToEnd = useRef(true);
  const setFollowing = (on: boolean) => {
    stickToEnd.current = on;
    setFollowingState(on);
  };
  const virtualizer = useVirtualizer({
    count: view.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });

  useEffect(
    () =>
      onNewRecords((records, reset) => {
        // Clear and a new session empty the display even while it is paused.
        if (reset) view.rebuild(recordRing);
        else if (!pausedRef.current) view.append(records, recordRing);
      }),
    [view],
  );

  // Follow the newest records while the list is scrolled to its end. A plain
  // scrollTop write (no layout read) keeps this to one layout per frame.
  useEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    if (filterChanged.current) {
      filterChanged.current = false;
      const sel = selectedSeq === null ? -1 : view.indexOfSeq(selectedSeq);
      if (sel >= 0) virtualizer.scrollToIndex(sel, { align: 'center' });
      else if (!stickToEnd.current) virtualizer.scrollToOffset(0);
    }
    if (!displayPaused && stickToEnd.current && view.length > 0) el.scrollTop = virtualizer.getTotalSize();
  });

  // A finding or the ladder asked to show a record. The filter may be clearing
  // in the same moment, so the request waits until the row is in the view.
  const pendingReveal = useRef<number | null>(null);
  useEffect(() => {
    if (revealSeq > 0) pendingReveal.current = selectedSeq;
  }, [revealSeq]);
  useEffect(() => {
    const seq = pendingReveal.current;
    if (seq === null) return;
    const i = view.indexOfSeq(seq);
    if (i >= 0) {
      pendingReveal.current = null;
      setFollowing(false);
      virtualizer.scrollToIndex(i, { align: 'center' });
    }
  });

  const select = (seq: number) => {
    // Keep the chosen row in view: stop following the newest records until "Jump to latest".
    setFollowing(false);
    useUi.getState().set({ selectedSeq: seq, selectedField: null });
  };

  return (
    <section
      aria-label="Records"
      className={`panel records ${columns.className}`}
      style={columns.style}
      data-hide={columns['data-hide']}
    >
      <header className="panel-head records-head">
        <h2>Records</h2>
        <div className="filter-box">
          <input
            type="text"
            aria-label="Filter"
            placeholder="filter: kind == HostFrame && host == h1"
            spellCheck={false}
            value={filterText}
            aria-invalid={compiled.error ? true : undefined}
            aria-describedby="filter-error"
            className={compiled.error ? 'invalid' : filterText ? 'valid' : ''}
            onChange={(e) => useUi.getState().set({ filterText: e.target.value })}
            onKeyDown={(e) => {
              if (e.key === 'Escape') (e.target as HTMLInputElement).blur();
            }}
          />
          <FilterCompletions text={filterText} />
          <div id="filter-error" className="filter-error" role="status">
            {compiled.error ? `${compiled.error.message} (at ${compiled.error.at + 1})` : ''}
          </div>
        </div>
        <label className="follow">
          Follow
          <select
            aria-label="Follow rank"
            value={followRank ?? ''}
            onChange={(e) =>
              useUi.getState().set({ followRank: e.target.value === '' ? null : Number(e.target.value) })
            }
          >
            <option value="">all ranks</option>
            {(ranks ?? []).map((r) => (
              <option key={r.rank} value={r.rank}>
                rank {r.rank}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          aria-pressed={displayPaused}
          onClick={() => useUi.getState().set({ displayPaused: !displayPaused })}
          title="Pause the display; capture goes on (Space)"
        >
          {displayPaused ? 'Resume display' : 'Pause display'}
        </button>
        <button type="button" onClick={() => clearRecords()} title="Clear the kept records (C)">
          Clear
        </button>
        <ColumnChooser />
      </header>
      <div className="records-stats muted mono small" aria-label="Record counts">
        showing {formatInt(view.length)} · kept {formatInt(recordRing.size)} of{' '}
        <span data-session-seen={recordRing.sessionSeen}>{formatInt(recordRing.sessionSeen)}</span> seen by
        the session
        {recordRing.notKept > 0 && ` · ${formatInt(recordRing.notKept)} counted, not kept here`}
        {displayPaused && <strong className="warn"> · display paused</strong>}
        {!following && (
          <button
            type="button"
            className="jump-latest"
            onClick={() => {
              setFollowing(true);
              const el = scrollRef.current;
              if (el) el.scrollTop = virtualizer.getTotalSize();
            }}
            title="Follow the newest records again"
          >
            Jump to latest ↓
          </button>
        )}
      </div>
      <div className="grid-head rec-row" aria-hidden="true">
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
        tabIndex={0}
        onScroll={(e) => {
          // Content growing never scrolls; only the user (or a reveal) does. Scrolling away stops
          // following; scrolling back to the end follows again unless a row is selected.
          const el = e.currentTarget;
          const atEnd = el.scrollTop + el.clientHeight >= el.scrollHeight - ROW_HEIGHT * 2;
          if (!atEnd && stickToEnd.current) setFollowing(false);
          else if (atEnd && !stickToEnd.current && useUi.getState().selectedSeq === null) setFollowing(true);
        }}
        onKeyDown={(e) => {
          if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
          e.preventDefault();
          const cur = selectedSeq === null ? -1 : view.indexOfSeq(selectedSeq);
          const next = Math.max(0, Math.min(view.length - 1, cur + (e.key === 'ArrowDown' ? 1 : -1)));
          const rec = view.at(next);
          if (rec) {
            select(rec.seq);
            virtualizer.scrollToIndex(next);
          }
        }}
      >
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {virtualizer.getVirtualItems().map((item) => {
            const r = view.at(item.index);
            if (!r) return null;
            return (
              <RecordRow
                key={r.seq}
                record={r}
                selected={r.seq === selectedSeq}
                top={item.start}
                index={item.index}
                onSelect={select}
              />
            );
          })}
        </div>
      </div>
    </section>
  );
}

function RecordRow({
  record: r,
  selected,
  top,
  index,
  onSelect,
}: {
  record: UnitRecord;
  selected: boolean;
  top: number;
  index: number;
  onSelect: (seq: number) => void;
}) {
  return (
    <div
      role="row"
      aria-rowindex={index + 1}
      aria-selected={selected}
      data-seq={r.seq}
      data-kind={r.kind}
      className={`rec-row ${selected ? 'selected' : ''} ${r.verdict !== 'ok' ? 'bad-row' : ''} dir-${r.dir} layer-${r.layer}`}
      style={{ transform: `translateY(${top}px)`, height: ROW_HEIGHT }}
      onClick={() => onSelect(r.seq)}
    >
      <span role="gridcell" className="mono">
        {r.seq}
      </span>
      <span role="gridcell" className="mono">
        {formatTime(r.t)}
      </span>
      <span role="gridcell" className="mono">
        {r.link}
      </span>
      <span role="gridcell" title={r.dir} aria-label={r.dir}>
        {r.dir === 'up' ? '↑' : '↓'}
      </span>
      <span role="gridcell" className="muted">
        {r.layer}
      </span>
      <span role="gridcell" className="kind">
        {r.kind}
      </span>
      <span role="gridcell" className="mono">
        {r.rank ?? ''}
      </span>
      <span role="gridcell" className="mono num">
        {formatInt(r.length)}
        {r.captured < r.length && (
          <span className="warn" title={`captured ${r.captured} of ${r.length} bytes`}>
            *
          </span>
        )}
      </span>
      <span role="gridcell" className={r.verdict === 'ok' ? 'ok' : 'bad'} title={r.verdict}>
        {r.verdict}
      </span>
      <span role="gridcell" className="info">
        {r.summary}
      </span>
    </div>
  );
}
