// A Slurm job's first task without Slurm, and a window attached to it, for
// tests over real sockets: the run `relay-lab slurm task` runs (2 hosts x 2
// ranks, real rank processes, rounds until ended, its --trace written in
// batches) behind its watch server (JobWatch, wired as task 0 wires it), and
// the window's side, an AttachRouter in front of a lab that answers snapshot
// only, saving where a local save goes (a LabHost's traces folder).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect } from 'vitest';
import { runCommand } from '../../cli/commands/run';
import { JobWatch } from '../../slurm/job-watch';
import { AttachRouter } from '../attach-router';
import { LabHost } from '../lab-host';
import type { RunReport } from '../run-topology';
import { TopologySession } from '../topology-session';

const cleanups: (() => Promise<void> | void)[] = [];

/** Registers the file's afterEach: what the helpers below started is ended and removed, last first. */
export function useCleanups(): void {
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
}

export function onCleanup(fn: () => Promise<void> | void): void {
  cleanups.push(fn);
}

export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface Job {
  watch: JobWatch;
  trace: string;
  session: () => TopologySession | null;
  /** Ends the rounds and resolves with the run's report (the trace is closed by then). */
  end(): Promise<RunReport>;
}

export async function startJob(o: { tracePiece?: number } = {}): Promise<Job> {
  const out = tempDir('relay-lab-job-');
  const trace = path.join(out, 'trace.ndjson');
  const watch = await JobWatch.start({ out, tracePiece: o.tracePiece });
  let session: TopologySession | null = null;
  let report: RunReport | null = null;
  const run = runCommand.run(
    [
      '--hosts',
      '2',
      '--ranks-per-host',
      '2',
      '--rounds',
      '100000',
      '--model-bytes',
      '16KiB',
      '--trace',
      trace,
    ],
    {
      onSession: (s) => {
        session = s;
        watch.bindSession(s);
      },
      onTrace: (t) => watch.bindTrace(t),
      onReport: (r) => (report = r),
    },
  );
  let ended = false;
  const end = async (): Promise<RunReport> => {
    ended = true;
    (session as TopologySession | null)?.endRounds();
    expect(await run).toBeTypeOf('number');
    return report!;
  };
  cleanups.push(async () => {
    if (!ended) await end().catch(() => {});
    await watch.close();
  });
  return { watch, trace, session: () => session, end };
}

/** The window's router (detached until told to attach) and the traces folder its saves go to. */
export function windowRouter(): { router: AttachRouter; tracesDir: string } {
  const tracesDir = tempDir('relay-lab-window-traces-');
  const host = new LabHost(new TopologySession(), { tracesDir, workDir: tempDir('relay-lab-window-work-') });
  const local = {
    subscribe: () => () => {},
    command: async (cmd: { type: string }) =>
      cmd.type === 'snapshot'
        ? { ok: true, snapshot: { startedAt: 0 } }
        : { ok: false, error: 'LOCAL', message: `local ${cmd.type}` },
  } as never;
  const router = new AttachRouter(local, { saveTrace: (f, w) => host.saveTraceVia(f, w) });
  cleanups.push(() => void router.command({ type: 'detach' }));
  return { router, tracesDir };
}
