// Keyboard shortcuts. Keys typed into a text field are left alone.
import { useEffect } from 'react';
import { useUi } from '../store/ui-store';
import { startFromForm } from '../store/start-topology';
import { useLab, send, clearRecords } from '../store/lab-store';
import { pauseAction } from './TopologyView';
import { isViewingTrace, stepTrace } from '../store/trace-store';
import { liveActionBlocker } from '../lib/source';
import { modalOpen } from './dialog-layers';

export interface Shortcut {
  keys: string;
  what: string;
}

export const SHORTCUTS: Shortcut[] = [
  { keys: '?', what: 'Show or hide this help' },
  { keys: '/', what: 'Focus the records filter' },
  { keys: 'Space', what: 'Pause or resume the records display (capture goes on)' },
  { keys: 'C', what: 'Clear the kept records' },
  { keys: 'K', what: 'Kill the selected rank' },
  { keys: 'P', what: 'Pause or resume the selected rank' },
  { keys: 'H', what: 'Kill the selected host' },
  { keys: 'R', what: 'Pause or resume rounds' },
  { keys: '.', what: 'Step one round (rounds paused)' },
  { keys: '↑ / ↓', what: 'Previous / next record (list focused)' },
  { keys: 'T', what: 'Toggle light and dark theme' },
  { keys: 'Ctrl+Enter', what: 'Start a topology from the form' },
  {
    keys: 'Esc',
    what: 'Close the dialog, tour, glossary or menu on top; leave the filter; else unselect the record',
  },
  { keys: '← / →', what: 'Trace: previous / next unit (timeline focused)' },
  { keys: 'Shift+← / → or PgUp / PgDn', what: 'Trace: previous / next round (timeline focused)' },
  { keys: '[ / ]', what: 'Trace: previous / next finding' },
];

function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return (
    !!el &&
    (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable)
  );
}

/** The window's keys (a keydown on the window, after any layer or field took its own). */
export function onShortcutKey(e: KeyboardEvent): void {
  const ui = useUi.getState();
  if (e.key === 'Escape' && ui.helpOpen) {
    ui.set({ helpOpen: false });
    return;
  }
  // Behind a modal dialog the window's keys do nothing (the dialog has the keyboard).
  if (modalOpen() && !(e.key === '?' && ui.helpOpen)) return;
  if (e.ctrlKey && e.key === 'Enter') {
    void startFromForm();
    return;
  }
  if (typing(e.target) || e.ctrlKey || e.metaKey || e.altKey) return;
  if ((e.key === '[' || e.key === ']') && isViewingTrace()) {
    void stepTrace('finding', e.key === ']' ? 1 : -1);
    return;
  }
  const snap = useLab.getState().snapshot;
  // Keys that act on the lab's topology do nothing where it is not shown (a trace, the taps), like their buttons.
  const live = liveActionBlocker(useLab.getState().view) === null;
  const rank = ui.selectedRank !== null ? snap?.ranks.find((r) => r.rank === ui.selectedRank) : undefined;
  switch (e.key) {
    case '?':
      ui.set({ helpOpen: !ui.helpOpen });
      break;
    case '/':
      e.preventDefault();
      document.querySelector<HTMLInputElement>('input[aria-label="Filter"]')?.focus();
      break;
    case ' ':
      if ((e.target as HTMLElement | null)?.tagName === 'BUTTON') return;
      e.preventDefault();
      ui.set({ displayPaused: !ui.displayPaused });
      break;
    case 'c':
      clearRecords();
      break;
    case 'k':
      if (rank && live) void send({ type: 'killRank', rank: rank.rank });
      break;
    case 'p':
      if (rank && live && pauseAction(rank).enabled)
        void send({ type: pauseAction(rank).type, rank: rank.rank });
      break;
    case 'h':
      if (ui.selectedHost !== null && live) void send({ type: 'killHost', host: ui.selectedHost });
      break;
    case 'r':
      if (snap && live) void send({ type: snap.roundsPaused ? 'resumeRounds' : 'pauseRounds' });
      break;
    case '.':
      if (live) void send({ type: 'stepRound' });
      break;
    case 't':
      ui.set({ theme: ui.theme === 'dark' ? 'light' : 'dark' });
      break;
    case 'Escape':
      // An Escape a popup used to close itself (popup-dismiss.ts) does nothing more.
      if (e.defaultPrevented) break;
      // The selected record goes, and with it the inspector's fields and bytes and the ladder pin it
      // set (as a click on another row clears them). The rank and host selection stays: K, P and H act on it.
      if (ui.selectedSeq !== null) ui.set({ selectedSeq: null, selectedField: null, ladderPin: null });
      break;
    default:
      return;
  }
}

export function useShortcuts(): void {
  useEffect(() => {
    window.addEventListener('keydown', onShortcutKey);
    return () => window.removeEventListener('keydown', onShortcutKey);
  }, []);
}
