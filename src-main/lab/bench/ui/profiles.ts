// The window benchmark's --profile and --trace output: a page or engine CPU
// profile summarised by self time per function, and a Chromium timeline
// summarised by the page's main-thread time per event.
import fs from 'node:fs';
import path from 'node:path';
import type { CDPSession } from 'playwright-core';
import { writeFileAtomicSync } from '../../../files/atomic-write';

/** Stops the page's CPU profiler, writes the profile and logs the functions with the most self time. */
export async function saveProfile(cdp: CDPSession, file: string, log: (s: string) => void): Promise<void> {
  const { profile } = await cdp.send('Profiler.stop');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeFileAtomicSync(file, JSON.stringify(profile));
  summarizeProfile(profile, file, log);
}

export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples?: number[];
  timeDeltas?: number[];
}

export function summarizeProfile(profile: CpuProfile, file: string, log: (s: string) => void): void {
  const self = new Map<number, number>();
  profile.samples?.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas?.[i] ?? 0)));
  const byFn = new Map<string, number>();
  let total = 0;
  for (const n of profile.nodes) {
    const us = self.get(n.id) ?? 0;
    total += us;
    const f = n.callFrame;
    const key = `${f.functionName || '(anon)'} ${path.basename(f.url)}:${f.lineNumber + 1}`;
    byFn.set(key, (byFn.get(key) ?? 0) + us);
  }
  const top = [...byFn].sort((a, b) => b[1] - a[1]).slice(0, 25);
  log(`profile ${file} (${(total / 1000).toFixed(0)} ms sampled):`);
  for (const [k, us] of top) log(`  ${(us / 1000).toFixed(1).padStart(8)} ms  ${k}`);
}

/** Writes a timeline trace and logs the main thread's time by event name (style, layout, paint, script). */
export function saveTrace(buf: Buffer, file: string, log: (s: string) => void): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeFileAtomicSync(file, buf);
  const events = (JSON.parse(buf.toString()) as { traceEvents: TraceEvent[] }).traceEvents;
  const main = events.find((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
  const byName = new Map<string, number>();
  for (const e of events) {
    if (e.ph !== 'X' || !e.dur || !main || e.tid !== main.tid || e.pid !== main.pid) continue;
    byName.set(e.name, (byName.get(e.name) ?? 0) + e.dur);
  }
  log(`trace ${file}: main thread time by event (nested events counted in each)`);
  for (const [k, us] of [...byName].sort((a, b) => b[1] - a[1]).slice(0, 14))
    log(`  ${(us / 1000).toFixed(1).padStart(8)} ms  ${k}`);
}

interface TraceEvent {
  name: string;
  ph: string;
  dur?: number;
  pid: number;
  tid: number;
  args?: { name?: string };
}
