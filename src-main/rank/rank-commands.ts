// A rank's commands from the coordinator (SyncNow, Shutdown) read off its
// control link, queued so an early SyncNow is never lost, and the wait for
// the parent's round-end cue that a new command interrupts.
import type { Mac } from '@shared/wire/mac';
import { decodeControlFrame, MSG_KIND_CONTROL } from '@shared/wire/control-frame';
import { decodeControlMsg } from '@shared/wire/control-msgs';
import type { RankLink } from './rank-link';
import { RoundEndCue } from './round-end-cue';
import type { ParentToRank, RankSpec } from './spec';

export type RankCmd = 'sync' | 'shutdown';

export class RankCommands {
  private readonly queue: RankCmd[] = [];
  private waiter: ((c: RankCmd) => void) | null = null;
  /** Why the rank must leave, when a control frame could not be used. */
  error: string | null = null;
  readonly cue: RoundEndCue;

  constructor(
    spec: RankSpec,
    mac: Mac,
    private readonly control: RankLink,
    fromParent?: (listener: (m: ParentToRank) => void) => void,
  ) {
    this.cue = new RoundEndCue(() => this.queue.length > 0 || control.failed !== null);
    fromParent?.((m) => this.cue.roundEnded(m.round));
    control.listen((blob) => {
      try {
        const f = decodeControlFrame(blob, mac, { version: spec.controlVersion });
        if (f.msgKind !== MSG_KIND_CONTROL) return;
        const m = decodeControlMsg(f.payload, { indexTable: spec.controlIndexTable });
        if (m.type === 'SyncNow') this.push('sync');
        else if (m.type === 'Shutdown' || m.type === 'ShutdownWithSave') this.push('shutdown');
      } catch (e) {
        // A control frame that fails its MAC or parse is fatal for the rank, as a wire error is for a
        // flodl worker: the rank cannot know what it missed (a lost SyncNow would park its host's fold
        // forever while its heartbeats keep it alive), so it leaves and its relay reports RankExit.
        this.error = `rejected control frame: ${(e as Error).message}`;
        process.stderr.write(`rank ${spec.rank}: ${this.error}\n`);
        this.push('shutdown');
      }
    });
    control.conn.onClose(() => this.push('shutdown'));
  }

  private push(c: RankCmd): void {
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w(c);
    } else this.queue.push(c);
    this.cue.check();
  }

  /** The next command (a failed control link is a shutdown). */
  next(): Promise<RankCmd> {
    if (this.queue.length > 0) return Promise.resolve(this.queue.shift()!);
    if (this.control.failed) return Promise.resolve('shutdown');
    return new Promise((r) => (this.waiter = r));
  }
}
