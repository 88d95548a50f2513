// The page's work per frame, read from a Chromium trace of the measuring
// window (the window benchmark's verdict). Pure: it takes the trace's events
// and returns numbers, so the unit test feeds it a made-up trace.
//
// Why a trace and not a probe in the page: the page can only read wall
// clocks, and on a loaded 2-core machine (the bench's own engine process,
// Chromium's compositor, raster and display threads all run beside the page)
// a wall clock counts the time the renderer's main thread waited for a CPU
// as if the page had worked. The trace has every task the main thread ran,
// each with its wall duration and its thread CPU time (`tdur`).
//
// A frame here is the span between the ends of two consecutive
// BeginMainFrame tasks (rAF callbacks, style, layout, paint, commit): its work
// is every top-level task the page's main thread ran in that span (WebSocket
// messages, React's scheduled work, timers, GC, and the frame itself), that
// is, all the main-thread work that went into producing that frame. A page
// that keeps up at 60 Hz needs it under the frame budget, whatever the machine
// does beside it; the frame intervals (rAF timestamps, judged apart) say
// whether the display got its frames on time.

/** What the measuring trace records: top-level tasks (`toplevel`) and the compositor's frames (`benchmark`). */
export const FRAME_TRACE_CATEGORIES = ['toplevel', 'benchmark'];

export interface TraceEvent {
  name: string;
  ph: string;
  ts: number;
  dur?: number;
  /** Thread CPU time of an X event, µs (absent where the platform has no thread clock). */
  tdur?: number;
  pid: number;
  tid: number;
  cat?: string;
  args?: Record<string, unknown>;
}

export interface TraceFrames {
  /** Per frame: the main thread's task time (wall), ms. */
  busy: number[];
  /** Per frame: the main thread's CPU time in those tasks, ms (NaN without thread clocks). */
  cpu: number[];
}

const TASK = 'ThreadControllerImpl::RunTask';
const FRAME = 'ProxyMain::BeginMainFrame';

/**
 * The page's renderer main thread: the CrRendererMain with the most
 * BeginMainFrame tasks (other renderers, if any, draw nothing in the window).
 */
export function pageMainThread(events: readonly TraceEvent[]): { pid: number; tid: number } | null {
  const mains = new Set<string>();
  for (const e of events)
    if (e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain')
      mains.add(`${e.pid}:${e.tid}`);
  const frames = new Map<string, number>();
  for (const e of events) {
    if (e.ph !== 'X' || e.name !== FRAME) continue;
    const k = `${e.pid}:${e.tid}`;
    if (mains.has(k)) frames.set(k, (frames.get(k) ?? 0) + 1);
  }
  const best = [...frames].sort((a, b) => b[1] - a[1])[0];
  if (!best) return null;
  const [pid, tid] = best[0].split(':').map(Number);
  return { pid, tid };
}

/** Per-frame main-thread work from a trace's events (see the file's head for the definition). */
export function framesFromTrace(events: readonly TraceEvent[]): TraceFrames {
  const out: TraceFrames = { busy: [], cpu: [] };
  const main = pageMainThread(events);
  if (!main) return out;
  const own = events.filter(
    (e) => e.ph === 'X' && e.pid === main.pid && e.tid === main.tid && e.dur !== undefined,
  );
  const byStart = (a: TraceEvent, b: TraceEvent) => a.ts - b.ts || b.dur! - a.dur!;
  // Top-level tasks; a task run inside another (a nested run loop) is already in its parent's time.
  const tasks: TraceEvent[] = [];
  for (const t of own.filter((e) => e.name === TASK).sort(byStart)) {
    const last = tasks.at(-1);
    if (last && t.ts + t.dur! <= last.ts + last.dur!) continue;
    tasks.push(t);
  }
  const frames = own.filter((e) => e.name === FRAME).sort(byStart);
  let ti = 0;
  for (let f = 1; f < frames.length; f++) {
    const from = frames[f - 1].ts + frames[f - 1].dur!;
    const to = frames[f].ts + frames[f].dur!;
    if (to <= from) continue;
    let busy = 0;
    let cpu = 0;
    while (ti < tasks.length && tasks[ti].ts + tasks[ti].dur! <= from) ti++;
    for (let i = ti; i < tasks.length && tasks[i].ts < to; i++) {
      const t = tasks[i];
      const overlap = Math.min(t.ts + t.dur!, to) - Math.max(t.ts, from);
      if (overlap <= 0) continue;
      busy += overlap;
      // A task cut by a frame's end gives each side its share of the task's CPU time.
      cpu += t.tdur === undefined ? NaN : t.dur! > 0 ? (t.tdur * overlap) / t.dur! : 0;
    }
    out.busy.push(busy / 1000);
    out.cpu.push(cpu / 1000);
  }
  return out;
}
