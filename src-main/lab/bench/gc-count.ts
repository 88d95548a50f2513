// The engine process's garbage collections while rounds run, from V8's own
// GC events: a major GC is a pause of several milliseconds inside whatever
// round it lands in, so its count per round belongs beside the round times
// (engine-heap.ts says how the engine keeps it low).
import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';

export interface GcCount {
  major: number;
  minor: number;
  /** Summed pause of the major GCs, ms. */
  majorPauseMs: number;
  /** Summed pause of every GC, ms. */
  pauseMs: number;
}

/** Counts this process's GCs from now until the returned function is called. */
export function countGc(): () => GcCount {
  const c: GcCount = { major: 0, minor: 0, majorPauseMs: 0, pauseMs: 0 };
  const add = (e: PerformanceEntry) => {
    const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
    c.pauseMs += e.duration;
    if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
      c.major++;
      c.majorPauseMs += e.duration;
    } else if (kind === constants.NODE_PERFORMANCE_GC_MINOR) c.minor++;
  };
  const obs = new PerformanceObserver((list) => list.getEntries().forEach(add));
  obs.observe({ entryTypes: ['gc'] });
  return () => {
    // Entries still buffered in the observer are counted before it stops.
    obs.takeRecords().forEach(add);
    obs.disconnect();
    return { ...c, majorPauseMs: round2(c.majorPauseMs), pauseMs: round2(c.pauseMs) };
  };
}

const round2 = (x: number) => Math.round(x * 100) / 100;
