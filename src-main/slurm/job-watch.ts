// What a Slurm job's first task serves its watchers (watch-server.ts): the
// job's session behind a LabHost once the run has one, and the run's trace as
// it is written (job-trace.ts). Started before the hosts join, so a window
// may attach early; until the session exists it answers NOT_READY. What a
// watcher does to the job's processes (kill, pause, resume, kill host, link
// faults) is recorded in the run's trace by the run's recorder, as a local
// window's actions are in its session's recording: the job's trace is the
// record of the whole session, the person's actions with it.
import fs from 'node:fs';
import path from 'node:path';
import type { AnyCommand, LabApi, LabBatch, ReplyOf } from '@shared/lab/contract';
import type { LiveTrace } from '../cli/commands/run';
import { LabHost } from '../lab/lab-host';
import type { TopologySession } from '../lab/topology-session';
import { JobTrace } from './job-trace';
import { startWatchServer, watchApi, type WatchServer } from './watch-server';

/** The job's lab as a watcher sees it, once the session exists (before: nothing to show yet). */
class LateLab implements LabApi {
  private lab: LabApi | null = null;
  private readonly pending = new Set<(b: LabBatch) => void>();
  bind(lab: LabApi): void {
    this.lab = lab;
    for (const l of this.pending) lab.subscribe(l);
  }
  subscribe(l: (b: LabBatch) => void): () => void {
    if (this.lab) return this.lab.subscribe(l);
    this.pending.add(l);
    return () => this.pending.delete(l);
  }
  command<C extends AnyCommand>(cmd: C): Promise<ReplyOf<C['type']>> {
    if (this.lab) return this.lab.command(cmd);
    return Promise.resolve({
      ok: false,
      error: 'NOT_READY',
      message: 'the job is still starting its hosts',
    } as ReplyOf<C['type']>);
  }
}

export interface JobWatchOptions {
  /** The job folder (the LabHost's work folder goes there). */
  out: string;
  /** Where the watch server listens (default 127.0.0.1, a free port). */
  listen?: { host: string; port: number };
  /** Bytes per trace piece (default JOB_TRACE_PIECE). */
  tracePiece?: number;
}

export class JobWatch {
  private readonly late = new LateLab();
  private host: LabHost | null = null;
  private live: LiveTrace | null = null;

  private constructor(
    private readonly out: string,
    readonly trace: JobTrace,
    private server: WatchServer | null,
  ) {}

  static async start(opts: JobWatchOptions): Promise<JobWatch> {
    const trace = new JobTrace(opts.tracePiece);
    const watch = new JobWatch(opts.out, trace, null);
    watch.server = await startWatchServer(watchApi(watch.late, trace), opts.listen ?? {});
    return watch;
  }

  get port(): number {
    return this.server!.port;
  }

  get token(): string {
    return this.server!.token;
  }

  /** The run's session (RunExtras.onSession): watchers see it and act on its processes from here on. */
  bindSession(s: TopologySession): void {
    this.host = new LabHost(s, {
      tracesDir: path.join(this.out, 'traces'),
      workDir: fs.mkdtempSync(path.join(this.out, '.watch-')),
      producer: 'relay-lab slurm',
    });
    if (this.live) this.host.recordCommandsTo(this.live.recorder);
    this.late.bind(this.host);
  }

  /**
   * The run's trace as it is written (RunExtras.onTrace): what a watcher's Save trace saves, and
   * where the commands watchers take are recorded from now on (the trace starts with the rounds).
   */
  bindTrace(t: LiveTrace): void {
    this.live = t;
    this.trace.bind(t);
    this.host?.recordCommandsTo(t.recorder);
  }

  /** Watchers are told the job ended, the trace is let go, the work folder removed. */
  async close(): Promise<void> {
    await this.server?.close();
    this.server = null;
    await this.trace.close();
    this.host?.removeWorkDir();
  }
}
