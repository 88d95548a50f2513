// A rank's state in a saved trace, from the trace itself. A window-recorded
// session has a `start` lifecycle event, kills and pauses; a reproduction's
// run is recorded once its rounds start and has none of those, and its ranks
// end by exiting, which only its units tell (RankExit). So: a rank is alive
// from its first unit, exited at its RankExit, dead when the coordinator
// declared it dead (DeclareDead) or a `dead` finding says so, and a lifecycle
// event or finding that names it wins as before.
import type { Finding, UnitRecord } from '@shared/lab/records';
import type { RankState } from '@shared/lab/state';
import type { LifecycleEvent } from './format';

export class TraceRankStates {
  readonly states: RankState[];
  readonly hostDead: boolean[];
  paused = false;

  constructor(private readonly hostRanks: readonly (readonly number[])[]) {
    this.states = hostRanks.flat().map(() => 'starting');
    this.hostDead = hostRanks.map(() => false);
  }

  lifecycle(e: LifecycleEvent): void {
    const s = this.states;
    if (e.action === 'start') s.fill('alive');
    else if (e.rank !== undefined && e.action === 'killRank') s[e.rank] = 'dead';
    else if (e.rank !== undefined && e.action === 'pauseRank') s[e.rank] = 'paused';
    else if (e.rank !== undefined && e.action === 'resumeRank') s[e.rank] = 'alive';
    else if (e.host !== undefined && e.action === 'killHost') {
      this.hostDead[e.host] = true;
      for (const r of this.hostRanks[e.host] ?? []) s[r] = 'dead';
    } else if (e.action === 'pauseRounds') this.paused = true;
    else if (e.action === 'resumeRounds') this.paused = false;
  }

  finding(f: Finding): void {
    if (f.kind !== 'dead' && f.kind !== 'exit') return;
    // As in the live session, a killed (dead) rank stays dead when its process exit is reported after.
    for (const r of f.ranks ?? [])
      if (r < this.states.length)
        this.states[r] = f.kind === 'dead' || this.states[r] === 'dead' ? 'dead' : 'exited';
  }

  unit(r: UnitRecord): void {
    // A rank's own legs (h0.r1.data) are its units even where the record names no rank (a magic).
    const rank = r.rank ?? rankOfLink(r.link);
    if (rank === undefined || rank < 0 || rank >= this.states.length) return;
    const now = this.states[rank];
    if (r.kind === 'RankExit') {
      // The rank said it is leaving: a clean exit, unless it was already dead.
      if (now !== 'dead') this.states[rank] = 'exited';
    } else if (r.kind === 'DeclareDead') {
      // The relay forwards an exit as DeclareDead too: an exited rank stays exited.
      if (now !== 'exited') this.states[rank] = 'dead';
    } else if (now === 'starting') this.states[rank] = 'alive';
  }
}

function rankOfLink(link: string): number | undefined {
  const m = /^h\d+\.r(\d+)\./.exec(link);
  return m ? Number(m[1]) : undefined;
}
