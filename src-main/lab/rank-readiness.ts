// Which lab ranks have their next synthetic gradient made, and how long the
// verdict waits for the ranks' checks of their adoption. A round starts at
// SyncNow and its time is the transport's (a trainer's backward pass comes
// before its sync), so the gradient is made between rounds: a rank makes it
// once the driver says the round is over for every rank (roundEnd), and says
// when it is done (prepared). The driver sends SyncNow once every rank that
// takes these cues is ready. Made at once after a rank's own adoption, the
// gradient took a core from the ranks still receiving the consensus, and on a
// machine with fewer cores than ranks SyncNow found ranks still making it
// (the first rounds' generator, before the JIT has it, takes milliseconds).

/**
 * The longest SyncNow waits for a rank's gradient: a rank that is slow to
 * make it (a very large model, a loaded machine) delays the round's start by
 * at most this, and one that never says (wedged, paused from outside) cannot
 * hold the rounds.
 */
export const PREPARED_WAIT_MS = 2000;

/**
 * The longest a round's verdict waits for the ranks' checks of their adoption
 * (sent after the round, rank/spec.ts `checked`); a rank that is gone by then
 * is not waited for, and an adoption without its check is counted, not compared.
 */
export const CHECK_WAIT_MS = 2000;

export class RankReadiness {
  /** Per rank that takes cues: the round its made gradient is for. */
  private readonly preparedFor = new Map<number, number>();

  prepared(rank: number, round: number): void {
    this.preparedFor.set(rank, Math.max(round, this.preparedFor.get(rank) ?? -1));
  }

  /** Of `ranks`, those that take cues and have not made the gradient of `round` yet. */
  lagging(round: number, ranks: readonly number[]): number[] {
    return ranks.filter((r) => {
      const p = this.preparedFor.get(r);
      return p !== undefined && p < round;
    });
  }

  /** A rank that left says nothing more. */
  forget(rank: number): void {
    this.preparedFor.delete(rank);
  }
}
