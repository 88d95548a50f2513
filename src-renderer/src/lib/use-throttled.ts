// A value that follows its source on the shared readout clock
// (lib/readout-clock.ts): views that are read rather than watched (ladder,
// chart) need not redraw on every round, and redraw in the same frame as the
// other read-out views.
import { useEffect, useRef, useState } from 'react';
import { onReadout } from './readout-clock';

export function useThrottled<T>(value: T, ms: number): T {
  const [shown, setShown] = useState(value);
  const latest = useRef(value);
  latest.current = value;
  // The same value (Object.is) does not re-render.
  useEffect(() => onReadout(ms, () => setShown(() => latest.current)), [ms]);
  return shown;
}
