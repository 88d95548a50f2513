// Showing one record the person asked for (a finding, a tour step, a
// reproduction's decisive unit). The filter is the person's view setting: it
// is set aside only when it hides that record, and comes back by itself
// when the source changes (Back to live, another trace) or on "Restore
// filter"; typing a new filter drops the one set aside.
import type { UiState } from './ui-store';
import { useUi } from './ui-store';
import { recordRing, useLab } from './lab-store';
import { tryCompileFilter } from '../lib/filter-language';
import { sourceKey } from '../lib/source';
import type { UnitRecord } from '@shared/lab/records';

/** The filter fields that would keep `record` out of the list (a filter that does not parse hides nothing). */
export function filterHides(filterText: string, record: UnitRecord | undefined): boolean {
  if (filterText.trim() === '') return false;
  const c = tryCompileFilter(filterText);
  if (!c.filter) return false;
  return !record || !c.filter(record);
}

export function revealRecord(seq: number, extra: Partial<Omit<UiState, 'set'>> = {}): void {
  const ui = useUi.getState();
  const record = recordRing.findBySeq(seq);
  const hides = filterHides(ui.filterText, record);
  ui.set({
    selectedSeq: seq,
    // A finding about a round passes its round in `extra`; any other reveal draws the unit's own.
    ladderPin: null,
    selectedField: null,
    // Following one rank hides the others' records.
    followRank: record && ui.followRank === record.rank ? ui.followRank : null,
    displayPaused: false,
    revealSeq: ui.revealSeq + 1,
    ...(hides ? { filterText: '', suspendedFilter: ui.filterText } : {}),
    ...extra,
  });
}

/** The filter set aside by a reveal comes back (Restore filter, or a change of source). */
export function restoreSuspendedFilter(): void {
  const ui = useUi.getState();
  if (ui.suspendedFilter !== null) ui.set({ filterText: ui.suspendedFilter, suspendedFilter: null });
}

// A filter set aside to show one record of the old source is the person's again in the new one.
let shownSource: string | null = null;
useLab.subscribe((lab) => {
  const key = sourceKey(lab.view, lab.snapshot);
  if (shownSource !== null && key !== shownSource) restoreSuspendedFilter();
  shownSource = key;
});

/** What the person types into the filter box: a new filter replaces any set aside. */
export function typeFilter(text: string): void {
  useUi.getState().set({ filterText: text, suspendedFilter: null });
}
