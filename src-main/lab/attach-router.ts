// In front of the lab (its topology, traces and taps): attaching the window to
// a topology that runs elsewhere (a Slurm job) and back. While attached, every
// command goes to the job (which accepts only watching and acting on its
// processes) and every event comes from it; the lab's own topology keeps
// running behind, as it does behind a trace or the taps. Save trace saves
// the job's own trace, fetched over the job's watch channel, where a local
// save goes (the file dialog, or the traces folder).
import type { AnyCommand, LabApi, LabBatch, LabView, ReplyOf, SavedTrace } from '@shared/lab/contract';
import { RemoteLab, type RemoteState } from './remote-lab';
import { cutJobTrace, writeJobTrace } from './job-trace-download';

export interface AttachRouterOptions {
  /**
   * Where Save trace writes while attached, as a local save does (LabHost.saveTraceVia):
   * `write` puts the NDJSON at the path given and answers its records. Without it, refused.
   */
  saveTrace?: (
    format: 'ndjson' | 'pcapng',
    write: (ndjsonPath: string) => Promise<number>,
  ) => Promise<SavedTrace>;
}

/** A wall-clock time as HH:MM:SS (local time), for a message. */
function clock(ms: number): string {
  return new Date(ms).toTimeString().slice(0, 8);
}

export class AttachRouter implements LabApi {
  private remote: RemoteLab | null = null;
  private view: Extract<LabView, { kind: 'attached' }> | null = null;
  private readonly listeners = new Set<(b: LabBatch) => void>();

  constructor(
    private readonly local: LabApi,
    private readonly opts: AttachRouterOptions = {},
  ) {
    local.subscribe((b) => {
      if (!this.remote) this.emit(b);
    });
  }

  subscribe(l: (b: LabBatch) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  private emit(b: LabBatch): void {
    for (const l of this.listeners) l(b);
  }

  get attachedView(): LabView | null {
    return this.view;
  }

  async command<C extends AnyCommand>(cmd: C): Promise<ReplyOf<C['type']>> {
    if (cmd.type === 'attach') return (await this.attach(cmd.address, cmd.token)) as ReplyOf<C['type']>;
    if (cmd.type === 'detach') return (await this.detach()) as ReplyOf<C['type']>;
    if (cmd.type === 'jobTrace')
      // The job's trace reaches the window through Save trace only (written whole, never in pieces).
      return {
        ok: false,
        error: 'NOT_SUPPORTED',
        message: "jobTrace is a job watch server's command: Save trace saves an attached job's trace",
      } as ReplyOf<C['type']>;
    if (this.remote && cmd.type === 'saveTrace')
      return (await this.saveJobTrace(this.remote, cmd.format)) as ReplyOf<C['type']>;
    if (this.remote) return this.remote.command(cmd);
    return this.local.command(cmd);
  }

  private async attach(address: string, token: string): Promise<ReplyOf<'attach'>> {
    if (this.remote) await this.detach();
    const onState = (state: RemoteState, since: number, why?: string) => {
      if (this.remote !== remote || state === 'connecting') return;
      this.view = { kind: 'attached', address, state, since };
      const events: LabBatch['events'] = [{ type: 'view', view: this.view }];
      if (state !== 'live')
        events.push({
          type: 'log',
          level: state === 'ended' ? 'info' : 'error',
          message: `${address}: ${state === 'ended' ? 'the job ended' : 'connection lost, reconnecting'}${why ? ` (${why})` : ''}`,
        });
      this.emit({ events });
    };
    const remote = new RemoteLab({ address, token, onState });
    this.remote = remote;
    remote.subscribe((b) => {
      if (this.remote === remote) this.emit(b);
    });
    try {
      await remote.firstOpen;
    } catch (e) {
      remote.close();
      this.remote = null;
      this.view = null;
      return {
        ok: false,
        error: 'ATTACH_FAILED',
        message: `cannot attach to ${address}: ${(e as Error).message}`,
      };
    }
    return { ok: true, view: this.view ?? { kind: 'attached', address, state: 'live', since: Date.now() } };
  }

  /**
   * The job's trace so far (what it had written when asked, whole records, closed with its end
   * line) saved where a local save goes. While the link is down nothing is fetched and nothing
   * saved: this window keeps no copy of the job's trace, and an old one would pass for the job's.
   */
  private async saveJobTrace(remote: RemoteLab, format: 'ndjson' | 'pcapng'): Promise<ReplyOf<'saveTrace'>> {
    const address = this.view?.address ?? 'the job';
    if (remote.state === 'lost')
      return {
        ok: false,
        error: 'NOT_CONNECTED',
        message: `the connection to ${address} is down since ${clock(this.view?.since ?? Date.now())} (reconnecting): the job's trace is fetched from the job and this window keeps no copy; save again once it is live`,
      };
    if (remote.state === 'ended')
      return {
        ok: false,
        error: 'NOT_CONNECTED',
        message: `the job at ${address} has ended: its whole trace is trace.ndjson in the job's folder (open it with Open trace)`,
      };
    if (!this.opts.saveTrace)
      return {
        ok: false,
        error: 'NOT_SUPPORTED',
        message: "this window cannot save an attached job's trace",
      };
    try {
      // The cut is taken first: a job with no trace yet, or a link that drops, says so before any dialog.
      const cut = await cutJobTrace(remote);
      const trace = await this.opts.saveTrace(format, (ndjsonPath) => writeJobTrace(remote, cut, ndjsonPath));
      return { ok: true, trace };
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      return {
        ok: false,
        error: typeof code === 'string' ? code : 'SAVE_FAILED',
        message: e instanceof Error ? e.message : String(e),
      };
    }
  }

  private async detach(): Promise<ReplyOf<'detach'>> {
    this.remote?.close();
    this.remote = null;
    this.view = null;
    const view: LabView = { kind: 'live' };
    const snap = await this.local.command({ type: 'snapshot' });
    this.emit({
      events: [
        { type: 'view', view },
        ...(snap.ok ? [{ type: 'snapshot' as const, snapshot: snap.snapshot, reset: true }] : []),
      ],
    });
    return { ok: true, view };
  }
}
