// The records panel's head: filter, follow, pause, clear, columns. Its own component, memoised,
// because the list renders in every frame while records stream and the head's controls need not:
// rendered with it, the filter input's props (a new onChange each time) were committed again in
// every frame (React's updateInput alone was 1.8 % of the page's main thread at 20,000/s).
import { memo } from 'react';
import { clearRecords, useLab } from '../store/lab-store';
import { useUi } from '../store/ui-store';
import { typeFilter } from '../store/reveal-record';
import type { FilterError } from '../lib/filter-language';
import { FilterCompletions } from './FilterCompletions';
import { ColumnChooser } from './ColumnChooser';
import { SuspendedFilterNote } from './SuspendedFilterNote';

export const RecordsHead = memo(function RecordsHead({
  filterText,
  error,
}: {
  filterText: string;
  error: FilterError | null;
}) {
  const followRank = useUi((s) => s.followRank);
  const displayPaused = useUi((s) => s.displayPaused);
  const ranks = useLab((s) => s.snapshot?.ranks);
  return (
    <header className="panel-head records-head">
      <h2>Records</h2>
      <div className="filter-box">
        <input
          type="text"
          aria-label="Filter"
          placeholder="filter: kind == HostFrame && host == h1"
          spellCheck={false}
          value={filterText}
          aria-invalid={error ? true : undefined}
          aria-describedby="filter-error"
          className={error ? 'invalid' : filterText ? 'valid' : ''}
          onChange={(e) => typeFilter(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Escape') (e.target as HTMLInputElement).blur();
          }}
        />
        <FilterCompletions text={filterText} />
        <div id="filter-error" className="filter-error" role="status">
          {error ? `${error.message} (at ${error.at + 1})` : ''}
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
      <SuspendedFilterNote />
    </header>
  );
});
