// The schedule a replay applies (fault-schedule.ts), against a stand-in for
// the round driver: gates open on the consensus, an adoption, deaths and
// time; actions on the same ranks keep their order, others do not wait.
import { describe, expect, it } from 'vitest';
import { FaultSchedule, faultTargets, type Fault, type ScheduleContext } from './fault-schedule';

function stand(faults: Fault[], safeWaitMs = 1000) {
  const applied: string[] = [];
  const state = {
    consensus: -1,
    adopted: new Set<number>(),
    checked: new Set<number>(),
    dead: new Set<number>(),
  };
  const ctx: ScheduleContext = {
    hostRanks: [
      [0, 1],
      [2, 3],
    ],
    isDead: (r) => state.dead.has(r),
    consensusTaken: (round) => state.consensus >= round,
    adopted: (_round, r) => state.adopted.has(r),
    apply: (f, round) => applied.push(`${f.action} ${f.link ?? f.target}@${round}`),
    safeWaitMs,
    deathWaitMs: 0,
    checked: (_round, r) => state.checked.has(r),
    checkWaitMs: 0,
  };
  return { schedule: new FaultSchedule(faults, ctx), applied, state };
}

describe('FaultSchedule', () => {
  it('applies ungated actions (version 1) as their round starts, in order', () => {
    const { schedule, applied } = stand([
      { action: 'kill-rank', target: 3, round: 2 },
      { action: 'pause-rank', target: 1, round: 1 },
      { action: 'link-fault', target: -1, round: 1, link: 'h1.uplink.data', fault: null },
    ]);
    schedule.roundStarted(0, 0);
    schedule.poll(0, 0);
    expect(applied).toEqual([]);
    schedule.roundStarted(1, 10);
    schedule.poll(1, 10);
    expect(applied).toEqual(['pause-rank 1@1', 'link-fault h1.uplink.data@1']);
    schedule.roundStarted(2, 20);
    schedule.poll(2, 20);
    expect(applied.at(-1)).toBe('kill-rank 3@2');
  });

  it('a gated action holds back later actions on its ranks only', () => {
    const { schedule, applied, state } = stand([
      { action: 'kill-rank', target: 1, round: 0, after: 'consensus' },
      { action: 'kill-rank', target: 2, round: 0 },
      { action: 'kill-host', target: 0, round: 0 },
    ]);
    schedule.roundStarted(0, 0);
    schedule.poll(0, 0);
    // Rank 2's kill lands before rank 2 can deposit; h0's (ranks 0, 1) waits behind rank 1's.
    expect(applied).toEqual(['kill-rank 2@0']);
    state.consensus = 0;
    schedule.poll(0, 1);
    expect(applied).toEqual(['kill-rank 2@0', 'kill-rank 1@0', 'kill-host 0@0']);
  });

  it('after adoption waits for the target to adopt (or die)', () => {
    const { schedule, applied, state } = stand([
      { action: 'pause-rank', target: 3, round: 0, after: 'adoption' },
    ]);
    schedule.roundStarted(0, 0);
    state.consensus = 0;
    schedule.poll(0, 0);
    expect(applied).toEqual([]);
    state.adopted.add(3);
    schedule.poll(0, 0);
    expect(applied).toEqual(['pause-rank 3@0']);
  });

  it("after check waits for the round end cue, then for the target's check; later actions on it wait too", async () => {
    const { schedule, applied, state } = stand([
      { action: 'pause-rank', target: 2, round: 0, after: 'check' },
      { action: 'resume-rank', target: 2, round: 0 },
      { action: 'kill-rank', target: 3, round: 0 },
    ]);
    schedule.roundStarted(0, 0);
    state.consensus = 0;
    state.adopted.add(2);
    // Adopted, but not checked: a rank checks only once told the round is over.
    schedule.poll(0, 1);
    expect(applied).toEqual(['kill-rank 3@0']);
    expect(schedule.hasPending(0, 'adopted')).toBe(false);
    await schedule.finishRound(
      0,
      async () => {},
      () => false,
      'adopted',
    );
    expect(applied).toEqual(['kill-rank 3@0']);
    // Told: the pause waits for the check (a stand-in wait that sees it come), then the resume.
    const waits: boolean[] = [];
    await schedule.finishRound(
      0,
      async (pending) => {
        // The first wait is for the pause's deaths (none), the second for its check.
        waits.push(pending());
        if (waits.length === 2) state.checked.add(2);
      },
      () => false,
      'cued',
    );
    expect(waits.slice(0, 2)).toEqual([false, true]);
    expect(applied).toEqual(['kill-rank 3@0', 'pause-rank 2@0', 'resume-rank 2@0']);
  });

  it('a resume waits as long as the person did after the pause, clamped under the staleness', () => {
    const { schedule, applied } = stand(
      [
        { action: 'pause-rank', target: 2, round: 0 },
        { action: 'resume-rank', target: 2, round: 0, afterMs: 2500 },
        { action: 'resume-rank', target: 3, round: 0, afterMs: 300 },
      ],
      1000,
    );
    schedule.roundStarted(0, 100);
    // The pause at 100; rank 3's resume counts from the round's start (no earlier action on it).
    expect(schedule.poll(0, 100)).toBe(300);
    expect(applied).toEqual(['pause-rank 2@0']);
    expect(schedule.poll(0, 400)).toBe(700);
    expect(applied).toEqual(['pause-rank 2@0', 'resume-rank 3@0']);
    // 2500 ms recorded, 1000 ms at most: the replay's rank 2 is not declared dead meanwhile.
    schedule.poll(0, 1099);
    expect(applied).toHaveLength(2);
    expect(schedule.poll(0, 1100)).toBeNull();
    expect(applied.at(-1)).toBe('resume-rank 2@0');
  });

  it('a resume after a death waits for the death; what is left at the round end is applied then', async () => {
    const { schedule, applied, state } = stand([
      { action: 'pause-rank', target: 1, round: 0 },
      { action: 'resume-rank', target: 1, round: 0, afterDead: [1] },
      { action: 'kill-rank', target: 3, round: 0, after: 'consensus' },
    ]);
    schedule.roundStarted(0, 0);
    schedule.poll(0, 5000);
    expect(applied).toEqual(['pause-rank 1@0']);
    state.dead.add(1);
    schedule.poll(0, 5001);
    expect(applied).toEqual(['pause-rank 1@0', 'resume-rank 1@0']);
    expect(schedule.hasPending(0)).toBe(true);
    await schedule.finishRound(0, async () => {});
    expect(applied.at(-1)).toBe('kill-rank 3@0');
    expect(schedule.hasPending(0)).toBe(false);
  });

  it('names the ranks behind a link', () => {
    const hosts = [
      [0, 1],
      [2, 3],
    ];
    const link = (l: string): Fault => ({ action: 'link-fault', target: -1, round: 0, link: l });
    expect(faultTargets(link('h0.r1.data'), hosts)).toEqual([1]);
    expect(faultTargets(link('r3.uplink.control'), hosts)).toEqual([3]);
    expect(faultTargets(link('h1.uplink.data'), hosts)).toEqual([2, 3]);
    expect(faultTargets({ action: 'kill-host', target: 1, round: 0 }, hosts)).toEqual([2, 3]);
  });
});
