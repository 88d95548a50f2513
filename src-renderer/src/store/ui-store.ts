// What the person chose: selection, filter, display pause, theme and layout.
// Theme and layout persist between launches (localStorage).
import { create } from 'zustand';
import { persist } from 'zustand/middleware';
import type { TopologyConfig } from '@shared/lab/topology';
import { TOPOLOGY_LIMITS } from '@shared/lab/topology-config';
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

export interface NewTopologyForm {
  hosts: number;
  ranksPerHost: number;
  /** Optional ranks host by host ("4,2,3"); when it parses, it wins over hosts x ranksPerHost. */
  perHost?: string;
  modelMiB: number;
  mode: TopologyConfig['mode'];
  policy: TopologyConfig['policy'];
  dtype: TopologyConfig['dtype'];
}

export interface UiState {
  theme: Theme;
  layout: Layout;
  form: NewTopologyForm;
  selectedRank: number | null;
  selectedHost: number | null;
  selectedSeq: number | null;
  selectedField: FieldPath | null;
  /** Bumped to ask the records list to scroll the selected record into view. */
  revealSeq: number;
  displayPaused: boolean;
  filterText: string;
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
      selectedRank: null,
      selectedHost: null,
      selectedSeq: null,
      selectedField: null,
      revealSeq: 0,
      displayPaused: false,
      filterText: '',
      followRank: null,
      helpOpen: false,
      markedBytes: null,
      set: (patch) => set(patch),
    }),
    {
      name: 'relay-lab.ui',
      version: 1,
      partialize: (s) => ({ theme: s.theme, layout: s.layout, form: s.form }),
    },
  ),
);

/** "4,2,3" -> [4, 2, 3]; null unless every entry is a whole number within the lab's one set of limits (TOPOLOGY_LIMITS). */
export function parsePerHost(text: string | undefined): number[] | null {
  if (!text || !text.trim()) return null;
  const parts = text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map(Number);
  const { maxHosts, maxRanksPerHost } = TOPOLOGY_LIMITS;
  if (
    parts.length < 1 ||
    parts.length > maxHosts ||
    parts.some((k) => !Number.isInteger(k) || k < 1 || k > maxRanksPerHost)
  )
    return null;
  return parts;
}

export function formToConfig(form: NewTopologyForm): Partial<TopologyConfig> {
  return {
    ranksPerHost: parsePerHost(form.perHost) ?? Array.from({ length: form.hosts }, () => form.ranksPerHost),
    modelBytes: Math.max(4, Math.round((form.modelMiB * 1024 * 1024) / 4) * 4),
    mode: form.mode,
    policy: form.policy,
    dtype: form.dtype,
  };
}
