// Lab-only historical behaviours (WIRE.md 6), so the fault lab can show each
// incident and its fix side by side: the behaviour appears with the switch on
// and is gone with it off.
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_TOPOLOGY, type TopologyConfig } from '@shared/lab/topology';
import { pidAlive } from '../engine/rank-process';
import type { HistoricalBehaviours } from '../engine/cluster';
import { runTopology } from './run-topology';
import type { Fault } from './round-driver';
import type { TopologySession } from './topology-session';

const base: TopologyConfig = {
  ...DEFAULT_TOPOLOGY,
  ranksPerHost: [2, 2],
  modelBytes: 4096,
  rounds: 2,
  roundIntervalMs: 0,
};
const pids: number[] = [];
afterEach(() => expect(pids.splice(0).filter(pidAlive)).toEqual([]));

async function run(
  config: Partial<TopologyConfig>,
  historical: HistoricalBehaviours,
  faults: Fault[] = [],
  maxMs?: number,
) {
  let session: TopologySession | null = null;
  const report = await runTopology(
    { ...base, ...config },
    { faults, extra: { historical }, onSession: (s) => (session = s), maxMs },
  );
  pids.push(...(session as unknown as TopologySession).activeCluster!.ranks.map((p) => p.pid!));
  return report;
}

describe('historical behaviours (lab-only)', () => {
  it('an idle rank holding NaN poisons the consensus without elision, not with it (6.13)', async () => {
    const poisoned = await run({ idleRanks: [1] }, { noElision: true, idleNaN: true });
    expect(poisoned.verdict).toBe('mismatch');
    expect(poisoned.findings.some((f) => f.kind === 'mismatch')).toBe(true);
    const clean = await run({ idleRanks: [1] }, { idleNaN: true });
    expect(clean.verdict).toBe('ok');
  });

  it('a stale relay build sending per-rank Data is refused loudly, naming the cause (6.11)', async () => {
    const r = await run({ rounds: 1 }, { staleRelayBuild: true });
    expect(r.verdict).not.toBe('ok');
    expect(
      r.findings.some((f) => /HostFrame/.test(f.message) && /mixed relay\/controller builds/.test(f.message)),
    ).toBe(true);
  });

  it('without DeclareDead forwarding a paused rank parks its host fold (6.6)', async () => {
    const parked = await run(
      { rounds: 3, stalenessMs: 400 },
      { noDeclareDead: true },
      [{ action: 'pause-rank', target: 1, round: 1 }],
      2500,
    );
    // Rank 1 is declared dead after the staleness, but its relay never hears of it: round 1 never completes.
    expect(parked.rounds.length).toBe(1);
    expect(parked.dead).toContain(1);
    expect(parked.ended).toMatch(/deadline/);
    expect(parked.findings.some((f) => f.kind === 'stalled' && f.ranks?.includes(1))).toBe(true);
    const released = await run(
      { rounds: 3, stalenessMs: 400 },
      {},
      [{ action: 'pause-rank', target: 1, round: 1 }],
      10_000,
    );
    expect(released.roundsCompleted).toBe(3);
  });

  it('Nagle on still reduces correctly (the cost shows in round times, 6.10)', async () => {
    const r = await run({}, { nagle: true });
    expect(r.verdict).toBe('ok');
  });
});
