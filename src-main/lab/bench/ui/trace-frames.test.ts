// The trace-derived frame work on a made-up trace: which thread is the page's,
// how tasks are cut at frame ends, nested tasks counted once, CPU time apart
// from wall time. No browser, no timing.
import { describe, expect, it } from 'vitest';
import { framesFromTrace, pageMainThread, type TraceEvent } from './trace-frames';
import { frameStats, ratePasses } from './frame-stats';

const meta = (pid: number, tid: number, name: string): TraceEvent => ({
  name: 'thread_name',
  ph: 'M',
  ts: 0,
  pid,
  tid,
  args: { name },
});
/** An X event on the page's main thread (pid 1, tid 10), times in ms. */
const x = (name: string, startMs: number, durMs: number, cpuMs = durMs, pid = 1, tid = 10): TraceEvent => ({
  name,
  ph: 'X',
  ts: startMs * 1000,
  dur: durMs * 1000,
  tdur: cpuMs * 1000,
  pid,
  tid,
});
const task = (s: number, d: number, cpu?: number) => x('ThreadControllerImpl::RunTask', s, d, cpu);
const frame = (s: number, d: number) => x('ProxyMain::BeginMainFrame', s, d);

describe('frames from a trace', () => {
  it("picks the renderer main thread that draws the page's frames", () => {
    const events = [
      meta(1, 10, 'CrRendererMain'),
      meta(2, 20, 'CrRendererMain'),
      meta(1, 11, 'Compositor'),
      x('ProxyMain::BeginMainFrame', 0, 1, 1, 2, 20),
      frame(0, 1),
      frame(16, 1),
      // A BeginMainFrame-named event off any main thread does not count.
      x('ProxyMain::BeginMainFrame', 0, 1, 1, 1, 11),
      x('ProxyMain::BeginMainFrame', 16, 1, 1, 1, 11),
      x('ProxyMain::BeginMainFrame', 32, 1, 1, 1, 11),
    ];
    expect(pageMainThread(events)).toEqual({ pid: 1, tid: 10 });
    expect(pageMainThread([meta(1, 10, 'CrRendererMain')])).toBeNull();
  });

  it('sums the tasks between two frame ends, cutting a task that straddles one', () => {
    const events = [
      meta(1, 10, 'CrRendererMain'),
      // Frame 0 ends at 2; frame 1 (task 16..22, its BeginMainFrame 16..21.5) ends at 21.5; frame 2 ends at 36.
      task(0, 2),
      frame(0, 2),
      task(5, 3, 1), // a WebSocket message: 3 ms wall, 1 ms CPU (the thread waited 2 ms for a core)
      task(16, 6),
      frame(16, 5.5),
      task(33, 3),
      frame(33, 3),
      // Off the page's thread: not counted.
      x('ThreadControllerImpl::RunTask', 5, 10, 10, 1, 11),
    ];
    const f = framesFromTrace(events);
    // Frame 1: 3 + (21.5 - 16) wall; frame 2: the rest of the 16..22 task (0.5) + 3.
    expect(f.busy).toEqual([8.5, 3.5]);
    expect(f.cpu).toEqual([1 + 5.5, 0.5 + 3]);
  });

  it('counts a task run inside another task once', () => {
    const events = [
      meta(1, 10, 'CrRendererMain'),
      task(0, 1),
      frame(0, 1),
      task(4, 6),
      task(5, 2), // nested run loop: already in the outer task's time
      task(16, 2),
      frame(16, 2),
    ];
    expect(framesFromTrace(events).busy).toEqual([8]);
  });

  it('judges a rate by the traced work and fails it without a trace', () => {
    const v = 1000 / 60;
    const samples = { intervals: Array(10).fill(v), work: Array(10).fill(30) };
    const light = { busy: Array(10).fill(12), cpu: Array(10).fill(6) };
    const st = frameStats(samples, v, light);
    expect(st.workP95).toBe(6);
    expect(st.workP99).toBe(6);
    expect(st.workClock).toBe('cpu');
    expect(st.busyP95).toBe(12);
    expect(st.probeP95).toBe(30);
    expect(ratePasses(st, v)).toBe(true);
    const heavy = { busy: Array(10).fill(20), cpu: Array(10).fill(17) };
    expect(ratePasses(frameStats(samples, v, heavy), v)).toBe(false);
    expect(ratePasses(frameStats(samples, v), v)).toBe(false);
    // Without thread clocks the verdict falls back to the tasks' wall time, and says so.
    const noClock = { busy: Array(10).fill(20), cpu: Array(10).fill(NaN) };
    const w = frameStats(samples, v, noClock);
    expect(w.workClock).toBe('wall');
    expect(w.workP95).toBe(20);
  });
});
