// Pause and Resume through the session, on real rank processes: a paused rank
// is stopped (SIGSTOP) and shows "paused"; Resume (SIGCONT) brings it back into
// the rounds; a rank declared dead while paused can still be resumed, and the
// session says what flodl does then (it is not readmitted).
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { LabBatch, LabEvent } from '@shared/lab/contract';
import type { RoundReport } from '@shared/lab/records';
import { DEFAULT_TOPOLOGY } from '@shared/lab/topology';
import { pidAlive } from '../engine/rank-process';
import { TopologySession } from './topology-session';

const sessions: TopologySession[] = [];
const pids: number[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) await s.stop();
  expect(pids.splice(0).filter(pidAlive)).toEqual([]);
});

/** The process state letter from /proc (T = stopped), or null where /proc is absent. */
function procState(pid: number): string | null {
  try {
    return /\) (\S)/.exec(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1] ?? null;
  } catch {
    return null;
  }
}

async function start(stalenessMs: number) {
  const session = new TopologySession();
  sessions.push(session);
  const events: LabEvent[] = [];
  session.subscribe((b: LabBatch) => events.push(...b.events));
  const reply = await session.command({
    type: 'start',
    config: {
      ...DEFAULT_TOPOLOGY,
      ranksPerHost: [2, 2],
      modelBytes: 8192,
      rounds: 0,
      roundIntervalMs: 0,
      stalenessMs,
    },
  });
  expect(reply.ok).toBe(true);
  pids.push(...session.activeCluster!.ranks.map((p) => p.pid!));
  const rounds = () => events.flatMap((e) => (e.type === 'round' ? [e.report] : [])) as RoundReport[];
  const rank = (r: number) => session.snapshot().ranks[r];
  return { session, events, rounds, rank };
}

describe('pause and resume a rank', () => {
  it('Resume (SIGCONT) undoes Pause: the rank is alive and in the rounds again', async () => {
    const { session, rounds, rank } = await start(30_000);
    await expect.poll(() => rounds().length, { timeout: 30_000 }).toBeGreaterThan(1);
    await session.command({ type: 'pauseRank', rank: 1 });
    expect(rank(1).state).toBe('paused');
    expect(rank(1).stopped).toBe(true);
    if (procState(rank(1).pid!) !== null)
      await expect.poll(() => procState(rank(1).pid!), { timeout: 10_000 }).toBe('T');
    await session.command({ type: 'resumeRank', rank: 1 });
    expect(rank(1).state).toBe('alive');
    expect(rank(1).stopped).toBeUndefined();
    const after = rounds().length;
    await expect
      .poll(
        () =>
          rounds()
            .slice(after)
            .filter((r) => r.accepted.includes(1)).length,
        { timeout: 30_000 },
      )
      .toBeGreaterThan(1);
  }, 90_000);

  it('declared dead while paused: shown as such, Resume still works, and the session says it is not readmitted', async () => {
    const { session, events, rounds, rank } = await start(2000);
    const said = () => events.flatMap((e) => (e.type === 'finding' ? [e.finding.message] : []));
    await expect.poll(() => rounds().length, { timeout: 30_000 }).toBeGreaterThan(0);
    await session.command({ type: 'pauseRank', rank: 3 });
    await expect.poll(() => rank(3).state, { timeout: 30_000 }).toBe('dead');
    expect(rank(3).stopped).toBe(true);
    const reply = await session.command({ type: 'resumeRank', rank: 3 });
    expect(reply.ok).toBe(true);
    expect(rank(3).stopped).toBeUndefined();
    expect(rank(3).resumedAfterDeath).toBe(true);
    if (procState(rank(3).pid!) !== null)
      await expect.poll(() => procState(rank(3).pid!), { timeout: 10_000 }).not.toBe('T');
    await expect
      .poll(() =>
        said().some((m) => /rank 3 resumed after it was declared dead while paused.*not readmit/.test(m)),
      )
      .toBe(true);
    // The others go on without it.
    const after = rounds().length;
    await expect.poll(() => rounds().length, { timeout: 30_000 }).toBeGreaterThan(after + 1);
    expect(
      rounds()
        .slice(after)
        .every((r) => !r.accepted.includes(3)),
    ).toBe(true);
  }, 90_000);
});
