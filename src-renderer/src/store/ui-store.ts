// What the person chose: selection, filter, display pause, theme and layout.
// Theme and layout persist between launches (localStorage).
import { create } from 'zustand';
import { persist } from 'zustand/middleware';
import type { Drafts, FieldErrors, TopologyForm } from '../lib/form-fields';
import type { FieldPath } from '../lib/field-ranges';

export type Theme = 'dark' | 'light';

export interface Layout {
  leftWidth: number;
  rightWidth: number;
  bottomHeight: number;
}

export const DEFAULT_LAYOUT: Layout = { leftWidth: 320, rightWidth: 530, bottomHeight: 290 };

/** A first layout that fits the window: side columns shrink on small screens so the records keep room. */
export function defaultLayoutFor(width: number, height: number): Layout {
  const clamp = (v: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, Math.round(v)));
  return {
    leftWidth: clamp(width * 0.2, 260, DEFAULT_LAYOUT.leftWidth),
    rightWidth: clamp(width * 0.33, 400, DEFAULT_LAYOUT.rightWidth),
    bottomHeight: clamp(height * 0.29, 200, DEFAULT_LAYOUT.bottomHeight),
  };
}

export type NewTopologyForm = TopologyForm;

/** Which of the collapsible panes are shown (the records list always is). */
export interface Panes {
  topology: boolean;
  inspector: boolean;
  bottom: boolean;
}

export interface UiState {
  theme: Theme;
  layout: Layout;
  panes: Panes;
  /** Record list columns (1-based, Info excluded) the person hid; null: the list picks by its width. */
  hiddenColumns: number[] | null;
  form: NewTopologyForm;
  /** Text typed into the form's number fields and not yet committed (blur, Enter, Start). */
  formDrafts: Drafts;
  /** Why a committed field (or the whole form) was refused; shown beside it. */
  formErrors: FieldErrors;
  selectedRank: number | null;
  selectedHost: number | null;
  selectedSeq: number | null;
  /** A finding about a round selected unit `seq`: the ladder shows the finding's round while it stays selected. */
  ladderPin: { seq: number; round: number } | null;
  selectedField: FieldPath | null;
  /** Bumped to ask the records list to scroll the selected record into view. */
  revealSeq: number;
  displayPaused: boolean;
  filterText: string;
  /** A filter set aside to show a record it hid (store/reveal-record.ts); null: none. */
  suspendedFilter: string | null;
  followRank: number | null;
  helpOpen: boolean;
  /** Bytes of one record marked by a reproduction's Inspect (e.g. the bytes a reader dropped). */
  markedBytes: { seq: number; offset: number; length: number; label: string } | null;
  set: (patch: Partial<Omit<UiState, 'set'>>) => void;
}

export const useUi = create<UiState>()(
  persist(
    (set) => ({
      // First launch follows the system; a choice made in the window is remembered.
      theme:
        typeof window !== 'undefined' && window.matchMedia?.('(prefers-color-scheme: light)').matches
          ? 'light'
          : 'dark',
      layout:
        typeof window === 'undefined'
          ? DEFAULT_LAYOUT
          : defaultLayoutFor(window.innerWidth, window.innerHeight),
      form: { hosts: 2, ranksPerHost: 4, modelMiB: 4, mode: 'fold', policy: 'elastic', dtype: 'f32' },
      panes: { topology: true, inspector: true, bottom: true },
      hiddenColumns: null,
      formDrafts: {},
      formErrors: {},
      selectedRank: null,
      selectedHost: null,
      selectedSeq: null,
      ladderPin: null,
      selectedField: null,
      revealSeq: 0,
      displayPaused: false,
      filterText: '',
      suspendedFilter: null,
      followRank: null,
      helpOpen: false,
      markedBytes: null,
      set: (patch) => set(patch),
    }),
    {
      name: 'relay-lab.ui',
      version: 1,
      partialize: (s) => ({
        theme: s.theme,
        layout: s.layout,
        form: s.form,
        panes: s.panes,
        hiddenColumns: s.hiddenColumns,
      }),
    },
  ),
);

export { parsePerHost, formToConfig } from '../lib/form-fields';

/** Collapses or restores one of the side and bottom panes (the records list always stays). */
export function togglePane(pane: keyof Panes): void {
  const ui = useUi.getState();
  ui.set({ panes: { ...ui.panes, [pane]: !ui.panes[pane] } });
}
