// What the teaching parts of the window show: the Glossary drawer (open, the
// term to show) and the spec section opened from a citation.
import { create } from 'zustand';

interface TeachState {
  glossaryOpen: boolean;
  /** Glossary id to scroll to and mark. */
  term: string | null;
  /** WIRE.md section number shown in the drawer ("3.2"), or null. */
  section: string | null;
  /** The guided tour: open, and the step it is at (kept when left, so it resumes). */
  tourOpen: boolean;
  tourStep: number;
  openTerm: (id: string) => void;
  openSection: (num: string) => void;
  toggleGlossary: () => void;
  close: () => void;
}

export const useTeach = create<TeachState>((set) => ({
  glossaryOpen: false,
  term: null,
  section: null,
  tourOpen: false,
  tourStep: 0,
  openTerm: (id) => set({ glossaryOpen: true, term: id, section: null }),
  openSection: (num) => set({ glossaryOpen: true, section: num }),
  toggleGlossary: () => set((s) => ({ glossaryOpen: !s.glossaryOpen, section: null })),
  close: () => set({ glossaryOpen: false }),
}));
