// In front of the lab (its topology, traces and taps): attaching the window to
// a topology that runs elsewhere (a Slurm job) and back. While attached, every
// command goes to the job (which accepts only watching and acting on its
// processes) and every event comes from it; the lab's own topology keeps
// running behind, as it does behind a trace or the taps.
import type { AnyCommand, LabApi, LabBatch, LabView, ReplyOf } from '@shared/lab/contract';
import { RemoteLab, type RemoteState } from './remote-lab';

export class AttachRouter implements LabApi {
  private remote: RemoteLab | null = null;
  private view: Extract<LabView, { kind: 'attached' }> | null = null;
  private readonly listeners = new Set<(b: LabBatch) => void>();

  constructor(private readonly local: LabApi) {
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
