// DeadRanks (WIRE.md 4.5): one flag per global rank, shared by the
// coordinator (heartbeat staleness) and the controller (scatter failures,
// RankExit, relay loss). Idempotent; out-of-range ranks are ignored.
export type DeathCause = 'stale' | 'exit' | 'scatter' | 'host-lost' | 'declared';

export class DeadRanks {
  private readonly dead: boolean[];
  private readonly listeners = new Set<(rank: number, cause: DeathCause) => void>();
  constructor(readonly worldSize: number) {
    this.dead = new Array<boolean>(worldSize).fill(false);
  }
  /** Returns true when the rank was alive until now. */
  declare(rank: number, cause: DeathCause = 'declared'): boolean {
    if (!Number.isInteger(rank) || rank < 0 || rank >= this.worldSize || this.dead[rank]) return false;
    this.dead[rank] = true;
    for (const l of this.listeners) l(rank, cause);
    return true;
  }
  isDead(rank: number): boolean {
    return rank >= 0 && rank < this.worldSize && this.dead[rank];
  }
  get count(): number {
    return this.dead.filter(Boolean).length;
  }
  list(): number[] {
    return this.dead.flatMap((d, r) => (d ? [r] : []));
  }
  onDeath(listener: (rank: number, cause: DeathCause) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
