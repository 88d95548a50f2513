// One clock for every view that is read rather than watched (the topology's
// bytes per second, the faults list, the savings table and chart, the
// ladder). Each tick runs all their updates in one task, so React renders
// them in one commit and the page lays them out and paints them in one
// frame: two frames a second carry that work, instead of each view's own
// timer putting it into a different frame (at 20,000 records a second every
// frame already carries the list, and a view redrawn on top of it in a frame
// of its own made that frame one of the slowest).
type Listener = () => void;

interface Clock {
  timer: ReturnType<typeof setInterval>;
  listeners: Set<Listener>;
}

const clocks = new Map<number, Clock>();

/** Calls `fn` on every tick of the shared `ms` clock (runs only while someone listens). */
export function onReadout(ms: number, fn: Listener): () => void {
  let clock = clocks.get(ms);
  if (!clock) {
    const listeners = new Set<Listener>();
    const timer = setInterval(() => {
      for (const l of [...listeners]) l();
    }, ms);
    clock = { timer, listeners };
    clocks.set(ms, clock);
  }
  const c = clock;
  c.listeners.add(fn);
  return () => {
    c.listeners.delete(fn);
    if (c.listeners.size === 0) {
      clearInterval(c.timer);
      clocks.delete(ms);
    }
  };
}
