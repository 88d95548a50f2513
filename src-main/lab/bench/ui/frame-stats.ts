// What the window benchmark reads from the page, and how it judges it. The
// page keeps two lists per frame (installFrameSampler): the interval between
// animation frames (requestAnimationFrame timestamps; at 60 Hz a smooth page
// reads 16.7 ms) and the frame's work, from the frame's start to the first
// task after it rendered (a MessageChannel message posted from the frame's
// callback runs once style, layout and paint are done). Pure, so the unit
// test checks it without a browser.
//
// Work counts from the frame's start (the vsync time the callbacks are given),
// so it includes the wait before the page's frame begins: on a loaded machine
// the renderer's main thread is not scheduled at once, or a task (a WebSocket
// message) runs over the frame's start. That wait is sampled on its own
// (`start`: frame start to the first callback), as information: the verdict
// stays on work, the time until the page is free after the frame.

/** Frame budget the issue sets: p95 of the frame's work at or under this. */
export const FRAME_BUDGET_MS = 16;

export interface FrameSamples {
  /** requestAnimationFrame timestamp deltas, ms. */
  intervals: number[];
  /** Per frame: frame start to the first task after rendering, ms. */
  work: number[];
  /** Per frame: frame start to its first animation-frame callback, ms (part of work; absent in old samples). */
  start?: number[];
}

export interface FrameStats {
  frames: number;
  intervalP50: number;
  intervalP95: number;
  workP50: number;
  workP95: number;
  /** Of work, the wait before the page's frame began (frame start to its first callback). */
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

export function frameStats(s: FrameSamples, vsyncMs: number): FrameStats {
  const r = (x: number) => Math.round(x * 100) / 100;
  return {
    frames: s.intervals.length,
    intervalP50: r(percentile(s.intervals, 50)),
    intervalP95: r(percentile(s.intervals, 95)),
    workP50: r(percentile(s.work, 50)),
    workP95: r(percentile(s.work, 95)),
    startP50: r(percentile(s.start ?? [], 50)),
    startP95: r(percentile(s.start ?? [], 95)),
    dropped: droppedFrames(s.intervals, vsyncMs),
    worst: r(s.intervals.length ? Math.max(...s.intervals) : NaN),
  };
}

/**
 * A rate passes when the frame's work has p95 within the budget and frames
 * keep the display's pace (interval p95 within 1.1 vsyncs, so no more than
 * 5% of frames are late).
 */
export function ratePasses(st: FrameStats, vsyncMs: number): boolean {
  return st.frames > 0 && st.workP95 <= FRAME_BUDGET_MS && st.intervalP95 <= vsyncMs * 1.1;
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

/** The newest record the list shows (largest data-seq among rendered rows), or -1. */
export const PAGE_NEWEST_SHOWN = `(() => {
  let max = -1;
  for (const el of document.querySelectorAll('.rec-scroll [data-seq]')) max = Math.max(max, Number(el.dataset.seq));
  return max;
})()`;
