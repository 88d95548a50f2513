// A store value read on the shared readout clock (lib/readout-clock.ts). The
// link counters change ten times a second and every store change comes once
// per frame (the records); views that show a rate to be read (the topology's
// bytes per second, the faults list) re-render on a tick when the store
// changed since the last one, not on every change. Unlike useThrottled, the
// component does not re-render on the changes in between: the store is
// listened to outside React.
import { useEffect, useRef, useState } from 'react';
import { onReadout } from './readout-clock';

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
    // The same value (Object.is) does not re-render.
    const take = () => setValue(() => selectRef.current(store.getState()));
    // A change between the first render and this effect is not lost.
    take();
    let changed = false;
    const unsubscribe = store.subscribe(() => {
      changed = true;
    });
    const off = onReadout(ms, () => {
      if (!changed) return;
      changed = false;
      take();
    });
    return () => {
      unsubscribe();
      off();
    };
  }, [store, ms]);
  return value;
}
