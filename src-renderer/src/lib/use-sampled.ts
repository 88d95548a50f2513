// A store value read at most every `ms` milliseconds. The link counters
// change ten times a second and every store change comes once per frame
// (the records); views that show a rate to be read (the topology's bytes per
// second, the faults list) re-render when a sample is due, not on every
// change. Unlike useThrottled, the component does not re-render on the
// changes in between: the store is listened to outside React.
import { useEffect, useRef, useState } from 'react';

/** How often a value that is read rather than watched (bytes per second, the faults holding) is redrawn. */
export const READOUT_MS = 500;

export interface SampledStore<S> {
  getState(): S;
  subscribe(listener: (state: S) => void): () => void;
}

export function useSampled<S, T>(store: SampledStore<S>, select: (state: S) => T, ms: number): T {
  const [value, setValue] = useState(() => select(store.getState()));
  const selectRef = useRef(select);
  selectRef.current = select;
  useEffect(() => {
    let last = Date.now();
    let timer: ReturnType<typeof setTimeout> | null = null;
    const take = () => {
      timer = null;
      last = Date.now();
      // The same value (Object.is) does not re-render.
      setValue(() => selectRef.current(store.getState()));
    };
    // A change between the first render and this effect is not lost.
    take();
    const unsubscribe = store.subscribe(() => {
      if (timer) return;
      const wait = last + ms - Date.now();
      if (wait <= 0) take();
      else timer = setTimeout(take, wait);
    });
    return () => {
      unsubscribe();
      if (timer) clearTimeout(timer);
    };
  }, [store, ms]);
  return value;
}
