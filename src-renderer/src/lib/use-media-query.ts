// True while a CSS media query matches (re-renders when it changes): lets a
// view choose between an inline row of controls and an overflow menu.
// One MediaQueryList per query, made once, and a stable subscribe function:
// a new matchMedia() on every render (and every store check) had Chromium
// evaluate the query, and re-subscribe, each time the toolbar rendered.
import { useSyncExternalStore } from 'react';

interface Watched {
  mq: MediaQueryList;
  subscribe: (notify: () => void) => () => void;
  matches: () => boolean;
}
const watched = new Map<string, Watched>();

function watch(query: string): Watched | null {
  if (typeof window === 'undefined' || !window.matchMedia) return null;
  let w = watched.get(query);
  if (!w) {
    const mq = window.matchMedia(query);
    let matches = mq.matches;
    const listeners = new Set<() => void>();
    mq.addEventListener('change', (e) => {
      matches = e.matches;
      for (const l of listeners) l();
    });
    w = {
      mq,
      subscribe: (notify) => {
        listeners.add(notify);
        return () => listeners.delete(notify);
      },
      matches: () => matches,
    };
    watched.set(query, w);
  }
  return w;
}

const noSubscribe = () => () => {};
const yes = () => true;

export function useMediaQuery(query: string): boolean {
  const w = watch(query);
  return useSyncExternalStore(w?.subscribe ?? noSubscribe, w?.matches ?? yes, yes);
}
