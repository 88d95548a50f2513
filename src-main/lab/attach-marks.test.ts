// What a person does from a window attached to a job is in the job's trace as
// it is in a local session's: the job's engine (the run `relay-lab slurm
// task` runs, real rank processes, its --trace) behind its watch server
// (JobWatch, wired as task 0 wires it), the window's side through
// AttachRouter; beside it a local LabHost running the same topology. The same
// pause, resume, link fault, kill rank and kill host, taken in each, are the
// same lifecycle lines in each trace (only their times differ), in the
// window's Save trace of the job as in the job's own file, and an opened job
// trace shows them as an opened local one does: the same timeline marks, the
// paused rank paused while it was.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LabApi, LabBatch, LabCommand } from '@shared/lab/contract';
import { DEFAULT_TOPOLOGY } from '@shared/lab/topology';
import { TopologySession } from './topology-session';
import { LabHost } from './lab-host';
import { onCleanup, startJob, tempDir, useCleanups, windowRouter } from './testing/attached-job';
import { loadTraceFile } from './trace/ndjson';
import type { LifecycleEvent, TraceEvent } from './trace/format';

useCleanups();

/** What the person does, in this order: every kind of action a watcher may take on a job's processes. */
const ACTIONS: LabCommand[] = [
  { type: 'pauseRank', rank: 1 },
  { type: 'resumeRank', rank: 1 },
  { type: 'setLinkFault', link: 'h0.r0.data', fault: { dir: 'up', latencyMs: 5 } },
  { type: 'setLinkFault', link: 'h0.r0.data', fault: null },
  { type: 'killRank', rank: 3 },
  { type: 'killHost', host: 1 },
];

/** The lifecycle lines those actions must leave, times aside. */
const LINES = [
  { type: 'lifecycle', action: 'pauseRank', rank: 1 },
  { type: 'lifecycle', action: 'resumeRank', rank: 1 },
  {
    type: 'lifecycle',
    action: 'faultApplied',
    link: 'h0.r0.data',
    dir: 'up',
    fault: { dir: 'up', latencyMs: 5, kind: 'latency' },
  },
  { type: 'lifecycle', action: 'faultCleared', link: 'h0.r0.data' },
  { type: 'lifecycle', action: 'killRank', rank: 3 },
  { type: 'lifecycle', action: 'killHost', host: 1 },
];

/** Counts the rounds an api reports. */
function roundsOf(api: LabApi): () => number {
  let n = 0;
  api.subscribe((b: LabBatch) => {
    for (const e of b.events) if (e.type === 'round') n++;
  });
  return () => n;
}

/** Once the rounds run, each action in turn, each accepted. */
async function act(api: LabApi, rounds: () => number): Promise<void> {
  await expect.poll(rounds, { timeout: 60_000 }).toBeGreaterThan(2);
  for (const cmd of ACTIONS) expect([cmd.type, await api.command(cmd)]).toEqual([cmd.type, { ok: true }]);
}

const actionLines = (events: readonly TraceEvent[]) =>
  events.filter((e): e is LifecycleEvent => e.type === 'lifecycle' && e.action !== 'start');
const withoutTimes = (events: LifecycleEvent[]) => events.map(({ t: _t, ...rest }) => rest);

/** A local session (a window's LabHost, its own recording) doing the actions; its saved trace. */
async function localTrace(): Promise<string> {
  const session = new TopologySession();
  const host = new LabHost(session, {
    tracesDir: tempDir('relay-lab-local-traces-'),
    workDir: tempDir('relay-lab-local-work-'),
  });
  onCleanup(async () => {
    await host.command({ type: 'stop' });
  });
  const rounds = roundsOf(host);
  const started = await host.command({
    type: 'start',
    config: {
      ...DEFAULT_TOPOLOGY,
      ranksPerHost: [2, 2],
      modelBytes: 16 * 1024,
      rounds: 0,
      roundIntervalMs: 0,
    },
  });
  expect(started.ok).toBe(true);
  await act(host, rounds);
  // Saved while it runs, as a job's is (a stop would add its own line).
  const saved = await host.command({ type: 'saveTrace', format: 'ndjson' });
  if (!saved.ok) throw new Error(`${saved.error}: ${saved.message}`);
  return saved.trace.path;
}

/** A job's first task without Slurm (2 hosts x 2 ranks, rounds until ended) and a window attached to it. */
async function attachedJob() {
  const { watch, trace, end } = await startJob();
  const { router } = windowRouter();
  const rounds = roundsOf(router);
  const attached = await router.command({
    type: 'attach',
    address: `127.0.0.1:${watch.port}`,
    token: watch.token,
  });
  expect(attached.ok).toBe(true);
  return { trace, router, rounds, end };
}

/** A trace opened as the window opens one: its timeline marks, and rank 1's state between the pause and the resume. */
async function opened(file: string) {
  const tracesDir = tempDir('relay-lab-open-');
  fs.copyFileSync(file, path.join(tracesDir, 'opened.ndjson'));
  const host = new LabHost(new TopologySession(), { tracesDir, workDir: tempDir('relay-lab-open-work-') });
  const reply = await host.command({ type: 'openTrace', name: 'opened.ndjson' });
  if (!reply.ok) throw new Error(`${reply.error}: ${reply.message}`);
  const view = reply.view;
  if (view.kind !== 'trace') throw new Error(`opened as ${view.kind}`);
  const marks = view.marks.filter((m) => m.action !== 'start').map((m) => m.label);
  const lines = actionLines((await loadTraceFile(file)).events);
  const pausedAt = (lines[0].t + lines[1].t) / 2;
  await host.command({ type: 'seekTrace', t: pausedAt });
  const snap = await host.command({ type: 'snapshot' });
  if (!snap.ok) throw new Error(`${snap.error}: ${snap.message}`);
  await host.command({ type: 'closeTrace' });
  return { marks, rank1WhilePaused: snap.snapshot.ranks[1]?.state };
}

describe("a window's actions on a job are in the job's trace", () => {
  it('as the same actions in a local session are in its trace: same lines, same marks', async () => {
    // The local session first: the same actions, its saved trace the pattern.
    const localFile = await localTrace();
    const local = actionLines((await loadTraceFile(localFile)).events);
    expect(withoutTimes(local)).toEqual(LINES);

    const j = await attachedJob();
    await act(j.router, j.rounds);
    // Save trace while attached: the job's trace so far holds them already.
    const saved = await j.router.command({ type: 'saveTrace', format: 'ndjson' });
    if (!saved.ok) throw new Error(`${saved.error}: ${saved.message}`);
    expect(withoutTimes(actionLines((await loadTraceFile(saved.trace.path)).events))).toEqual(LINES);

    const report = await j.end();
    const job = await loadTraceFile(j.trace);
    expect(job.complete).toBe(true);
    const lines = actionLines(job.events);
    // The same lines as the local session's, only their times differ.
    expect(withoutTimes(lines)).toEqual(withoutTimes(local));
    // On the trace's clock, in the order taken, among the rounds (after the first, before the end).
    const ts = lines.map((e) => e.t);
    expect(ts).toEqual([...ts].sort((a, b) => a - b));
    const firstRound = job.events.find((e) => e.type === 'round')!.t;
    const lastEvent = job.events.at(-1)!.t;
    expect(ts[0]).toBeGreaterThan(firstRound);
    expect(ts.at(-1)).toBeLessThanOrEqual(lastEvent);
    // The job's report says what happened to the ranks, as before.
    expect(report.dead).toEqual(expect.arrayContaining([2, 3]));

    // Opened, the job's trace shows them as the local one does.
    const fromJob = await opened(j.trace);
    const fromLocal = await opened(localFile);
    expect(fromJob.marks).toEqual(fromLocal.marks);
    expect(fromJob.marks).toEqual([
      'pauseRank rank 1',
      'resumeRank rank 1',
      'faultApplied h0.r0.data latency',
      'faultCleared h0.r0.data',
      'killRank rank 3',
      'killHost h1',
    ]);
    expect(fromJob.rank1WhilePaused).toBe('paused');
    expect(fromLocal.rank1WhilePaused).toBe('paused');
  }, 240_000);
});
