// What the window benchmark reads, and how it judges it. Two sources per
// measuring window:
//
// - the page (installFrameSampler, PAGE_SAMPLER): the interval between
//   animation frames (requestAnimationFrame timestamps; at 60 Hz a smooth
//   page reads 16.7 ms), which gives the frames the display did not get
//   (dropped); and, for information, the old probe: frame start to the first
//   task after the frame (a MessageChannel message posted from the frame's
//   callback).
// - a Chromium trace of the same window (trace-frames.ts): the main thread's
//   work per frame, as thread CPU time (`work`, the verdict) and as the wall
//   time of its tasks (`busy`).
//
// Why the probe is not the verdict: it counts from the vsync time the
// callbacks are given, so it includes the wait before the main thread gets to
// the frame (a WebSocket task running over the frame's start, or the thread
// waiting for a CPU) and the time it is descheduled during the frame. A trace
// of the page fed only by the real topology (4 rounds a second) read, per
// frame, CPU p50/p95 1.2/13.8 ms while the probe read 1.9/14.4 ms; at 20k/s
// the probe read p95 37 ms where the main thread's CPU time was 14.5 ms and
// its task wall time 28.5 ms: half the wall time it was runnable, not running
// (2 cores shared with the engine, Chromium's raster and display threads).
// Pure, so the unit test checks it without a browser.

import type { TraceFrames } from './trace-frames';

/** Frame budget the issue sets: p95 of the frame's work at or under this. */
export const FRAME_BUDGET_MS = 16;

export interface FrameSamples {
  /** requestAnimationFrame timestamp deltas, ms. */
  intervals: number[];
  /** Per frame: frame start to the first task after rendering, ms (the in-page probe). */
  work: number[];
  /** Per frame: frame start to its first animation-frame callback, ms (part of work; absent in old samples). */
  start?: number[];
}

export interface FrameStats {
  /** Frames the page's rAF loop saw (intervals). */
  frames: number;
  intervalP50: number;
  intervalP95: number;
  /** Frames the trace delimited (BeginMainFrame to BeginMainFrame); 0 without a trace. */
  tracedFrames: number;
  /** The verdict: the main thread's CPU time per frame, from the trace (NaN without one). */
  workP50: number;
  workP95: number;
  /** The tail, as information: the read-out views redraw together twice a second, in frames of their own. */
  workP99: number;
  /** Which clock work is on: thread CPU time, or the tasks' wall time where the trace has no thread clock. */
  workClock: 'cpu' | 'wall';
  /** The same tasks' wall time per frame (includes time the thread waited for a CPU). */
  busyP50: number;
  busyP95: number;
  /** In-page probe (information): frame start to the first task after the frame. */
  probeP50: number;
  probeP95: number;
  /** Of the probe, the wait before the page's frame began (frame start to its first callback). */
  startP50: number;
  startP95: number;
  /** Frames the display would have shown but the page did not produce (intervals beyond 1.5 vsyncs). */
  dropped: number;
  /** Longest interval, ms. */
  worst: number;
}

/** Nearest-rank percentile (p in 0..100) of unsorted values; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/**
 * Dropped frames: an interval of k vsyncs (rounded) hides k - 1 frames.
 * `vsyncMs` is the display's frame interval (measured on the idle page).
 */
export function droppedFrames(intervals: readonly number[], vsyncMs: number): number {
  let dropped = 0;
  for (const d of intervals) if (d > vsyncMs * 1.5) dropped += Math.round(d / vsyncMs) - 1;
  return dropped;
}

export function frameStats(s: FrameSamples, vsyncMs: number, trace?: TraceFrames): FrameStats {
  const r = (x: number) => Math.round(x * 100) / 100;
  const busy = trace?.busy ?? [];
  const hasCpu = trace !== undefined && trace.cpu.every((x) => Number.isFinite(x));
  const work = hasCpu ? trace.cpu : busy;
  return {
    frames: s.intervals.length,
    intervalP50: r(percentile(s.intervals, 50)),
    intervalP95: r(percentile(s.intervals, 95)),
    tracedFrames: busy.length,
    workP50: r(percentile(work, 50)),
    workP95: r(percentile(work, 95)),
    workP99: r(percentile(work, 99)),
    workClock: hasCpu ? 'cpu' : 'wall',
    busyP50: r(percentile(busy, 50)),
    busyP95: r(percentile(busy, 95)),
    probeP50: r(percentile(s.work, 50)),
    probeP95: r(percentile(s.work, 95)),
    startP50: r(percentile(s.start ?? [], 50)),
    startP95: r(percentile(s.start ?? [], 95)),
    dropped: droppedFrames(s.intervals, vsyncMs),
    worst: r(s.intervals.length ? Math.max(...s.intervals) : NaN),
  };
}

/**
 * A rate passes when the main thread's work per frame (from the trace) has
 * p95 within the budget and frames keep the display's pace (interval p95
 * within 1.1 vsyncs, so no more than 5% of frames are late). Without a trace
 * work is NaN and the rate fails.
 */
export function ratePasses(st: FrameStats, vsyncMs: number): boolean {
  return (
    st.frames > 0 && st.tracedFrames > 0 && st.workP95 <= FRAME_BUDGET_MS && st.intervalP95 <= vsyncMs * 1.1
  );
}

// The page's side, as source text (this layer has no DOM types): evaluated in
// the page by the driver. It samples into window.__uiBench.
export const PAGE_SAMPLER = `(() => {
  if (window.__uiBench) return;
  const s = { intervals: [], work: [], start: [], last: 0, frameStart: 0 };
  window.__uiBench = s;
  const ch = new MessageChannel();
  ch.port1.onmessage = () => { if (s.frameStart) s.work.push(performance.now() - s.frameStart); };
  const loop = (ts) => {
    if (s.last) s.intervals.push(ts - s.last);
    s.last = ts;
    s.frameStart = ts;
    s.start.push(performance.now() - ts);
    ch.port2.postMessage(0);
    requestAnimationFrame(loop);
  };
  requestAnimationFrame(loop);
})()`;

/** Hands over the samples taken since the last call and starts afresh. */
export const PAGE_TAKE_SAMPLES = `(() => {
  const s = window.__uiBench;
  return { intervals: s.intervals.splice(0), work: s.work.splice(0), start: s.start.splice(0) };
})()`;

/** The newest record the list shows (largest data-seq among DOM rows, or the drawn rows' newest), or -1. */
export const PAGE_NEWEST_SHOWN = `(() => {
  let max = -1;
  for (const el of document.querySelectorAll('.rec-scroll [data-seq]')) max = Math.max(max, Number(el.dataset.seq));
  for (const el of document.querySelectorAll('.rec-scroll [data-newest-seq]')) max = Math.max(max, Number(el.dataset.newestSeq));
  return max;
})()`;
