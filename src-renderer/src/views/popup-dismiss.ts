// The toolbar's "More" menu and the column chooser close the same way: Escape,
// or a press outside them.
import { useEffect, useRef, type RefObject } from 'react';

/**
 * Whether `e` (a keydown or mousedown on the document) closes the open popup `root`. An Escape it
 * takes is marked used (preventDefault): the window hears the key after the document, and its own
 * Escape (clear the selected record, shortcuts.ts) must not act on the same press.
 */
export function dismisses(e: Event, root: Node | null): boolean {
  if (e.type === 'keydown') {
    if ((e as KeyboardEvent).key !== 'Escape') return false;
    e.preventDefault();
    return true;
  }
  return !root?.contains(e.target as Node);
}

/** While `open`, closes the popup at `ref` on Escape or a press outside it. */
export function useDismiss(ref: RefObject<HTMLElement | null>, open: boolean, close: () => void): void {
  const closeNow = useRef(close);
  closeNow.current = close;
  useEffect(() => {
    if (!open) return;
    const onEvent = (e: Event) => {
      if (dismisses(e, ref.current)) closeNow.current();
    };
    document.addEventListener('mousedown', onEvent);
    document.addEventListener('keydown', onEvent);
    return () => {
      document.removeEventListener('mousedown', onEvent);
      document.removeEventListener('keydown', onEvent);
    };
  }, [open, ref]);
}
