// Real rank processes: a rank checks its adoption (the digest for the lab's
// verdict) and makes its next gradient only after every rank adopted the
// round (the driver's roundEnd cue), and the driver sends a round's SyncNow
// only after every rank said its gradient is made (rank-readiness.ts says why).
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_TOPOLOGY } from '@shared/lab/topology';
import { pidAlive } from '../engine/rank-process';
import { runTopology } from './run-topology';
import type { TopologySession } from './topology-session';

const pids: number[] = [];
afterEach(() => {
  expect(pids.splice(0).filter(pidAlive)).toEqual([]);
});

describe('the gradient between rounds', () => {
  it('is made, and each adoption checked, after the round ends for every rank; SyncNow waits for it', async () => {
    const log: string[] = [];
    let session: TopologySession | null = null;
    const report = await runTopology(
      { ...DEFAULT_TOPOLOGY, ranksPerHost: [2, 2], modelBytes: 16 * 1024, rounds: 4, roundIntervalMs: 0 },
      {
        onSession: (s) => (session = s),
        observe: {
          onRankMessage: (rank, m) => {
            if (m.type === 'adopted' || m.type === 'checked' || m.type === 'prepared')
              log.push(`${m.type} ${rank} ${m.round}`);
          },
        },
        onRoundsStart: (s) => (s.requireRounds().onRoundStart = (r) => log.push(`start ${r}`)),
      },
    );
    pids.push(...(session as TopologySession | null)!.activeCluster!.ranks.map((p) => p.pid!));
    expect(report.verdict).toBe('ok');
    const at = (entry: string) => {
      const i = log.indexOf(entry);
      expect(i, `${entry} in ${log.join(', ')}`).toBeGreaterThanOrEqual(0);
      return i;
    };
    for (let r = 0; r < 4; r++) {
      for (let k = 0; k < 4; k++) {
        // Round 0 may start before the hook that logs starts is in place.
        if (r === 0) continue;
        expect(at(`prepared ${k} ${r}`)).toBeLessThan(at(`start ${r}`));
        for (let j = 0; j < 4; j++) {
          expect(at(`prepared ${k} ${r}`)).toBeGreaterThan(at(`adopted ${j} ${r - 1}`));
          // The lab's check of an adoption (its digest) comes after the round too, not inside it.
          expect(at(`checked ${k} ${r - 1}`)).toBeGreaterThan(at(`adopted ${j} ${r - 1}`));
        }
      }
    }
  }, 60_000);
});
