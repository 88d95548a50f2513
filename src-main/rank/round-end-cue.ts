// A lab rank's wait between adopting a round and making its next gradient
// (src-main/lab/rank-readiness.ts says why the gradient waits): for the
// parent's word that the round is over for every rank, or for anything that
// makes waiting pointless: a command from the coordinator (a SyncNow that did
// not wait for this rank, a Shutdown) or a failed control link. A parent that
// never speaks costs the rank nothing but the wait for the next SyncNow.
export class RoundEndCue {
  private ended = -1;
  private waiter: { round: number; resolve: () => void } | null = null;

  constructor(private readonly interrupted: () => boolean) {}

  /** The parent says every surviving rank has adopted `round`. */
  roundEnded(round: number): void {
    this.ended = Math.max(this.ended, round);
    this.check();
  }

  /** Resolves once `round` has ended (or waiting was interrupted). */
  until(round: number): Promise<void> {
    if (this.ended >= round || this.interrupted()) return Promise.resolve();
    return new Promise((resolve) => (this.waiter = { round, resolve }));
  }

  /** Looks again (a command arrived, the control link failed). */
  check(): void {
    const w = this.waiter;
    if (!w || (this.ended < w.round && !this.interrupted())) return;
    this.waiter = null;
    w.resolve();
  }
}
