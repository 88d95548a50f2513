// Record's draft (session-recorder.ts) from round reports and command stamps,
// without processes: which gate each action gets comes from what the round
// reports say happened (the consensus a target's frame is in, the adoption it
// made), not from the stamp's view of the moment, which can lag a rank's IPC.
import { describe, expect, it } from 'vitest';
import type { RoundReport } from '@shared/lab/records';
import type { SessionSnapshot } from '@shared/lab/state';
import { DEFAULT_TOPOLOGY } from '@shared/lab/topology';
import { ReproRecorder, type ActionStamp } from './session-recorder';

const snapshot = (dead: number[] = []): SessionSnapshot => ({
  running: true,
  config: { ...DEFAULT_TOPOLOGY, ranksPerHost: [2, 2], modelBytes: 4096 },
  saltHex: '00'.repeat(16),
  hosts: [],
  ranks: [0, 1, 2, 3].map((rank) => ({
    rank,
    host: rank >> 1,
    state: dead.includes(rank) ? 'dead' : 'alive',
    roundsCompleted: 0,
  })),
  links: [],
  round: 0,
  roundsCompleted: 0,
  roundsPaused: false,
  startedAt: 1,
});

const report = (round: number, accepted: number[], adopted = accepted): RoundReport => ({
  round,
  accepted,
  mergeOrder: [accepted.filter((r) => r < 2), accepted.filter((r) => r >= 2)],
  consensusSha256: round.toString(16).padStart(64, '0'),
  verdict: 'ok',
  maxRelError: 0,
  groups: [],
  adopted: adopted.map((rank) => ({ rank, weight: 1, digest: '' })),
  durationMs: 1,
  uplinkBytesPerHost: [0, 0],
  foldedPerHost: [],
});

const stamp = (round: number, t: number, atMs?: number, dead: number[] = []): ActionStamp => ({
  round,
  t,
  dead,
  ...(atMs !== undefined ? { atMs } : {}),
});

describe('ReproRecorder.draft', () => {
  it('gates each action by what its round reports say happened', () => {
    const rec = new ReproRecorder();
    rec.begin(snapshot());
    rec.setOn(true, 1);
    const round = (r: RoundReport, dead: number[] = []) =>
      rec.observe({
        events: [
          { type: 'snapshot', snapshot: snapshot(dead) },
          { type: 'round', report: r },
        ],
      });
    round(report(0, [0, 1, 2, 3]));
    // Round 1: rank 1 killed before it deposited (not in the consensus).
    rec.command({ type: 'killRank', rank: 1 }, stamp(1, 1000, 2));
    round(report(1, [0, 2, 3]), [1]);
    // Round 2: rank 2 paused after it adopted, while the round was being closed (no atMs);
    // round 3 stalls on it; resumed 2.4 s into round 3.
    round(report(2, [0, 2, 3]), [1]);
    rec.command({ type: 'pauseRank', rank: 2 }, stamp(2, 2000, undefined, [1]));
    rec.command({ type: 'resumeRank', rank: 2 }, stamp(3, 4400, 2400, [1]));
    round(report(3, [0, 2, 3]), [1]);
    // Round 4: rank 3 paused after it deposited, before it adopted; declared dead; resumed after.
    rec.command({ type: 'pauseRank', rank: 3 }, stamp(4, 5000, 5, [1]));
    rec.command({ type: 'resumeRank', rank: 3 }, stamp(4, 9000, 4005, [1, 3]));
    round(report(4, [0, 2, 3], [0, 2]), [1, 3]);
    // Round 5 had not ended when the file was drafted: it and its action are left out.
    rec.command({ type: 'killRank', rank: 2 }, stamp(5, 9500, 3, [1, 3]));
    const r = rec.draft();
    expect(r.schedule).toEqual([
      { round: 1, action: 'kill-rank', rank: 1, atMs: 2 },
      { round: 2, action: 'pause-rank', rank: 2, after: 'adoption' },
      { round: 3, action: 'resume-rank', rank: 2, atMs: 2400, afterMs: 2400 },
      { round: 4, action: 'pause-rank', rank: 3, atMs: 5, after: 'consensus' },
      { round: 4, action: 'resume-rank', rank: 3, atMs: 4005, afterDead: [3] },
    ]);
    expect(r.topology.rounds).toBe(5);
    expect(r.recordedFrom).toBe(1);
    expect(r.expectations).toMatchObject({ verdict: 'ok', dead: [1, 3] });
    expect(r.description).toMatch(/from round 1: a replay runs from round 0/);
    expect(r.description).toMatch(/1 action\(s\) taken in round 5, which had not ended/);
  });

  it('a resume in the round of its pause waits as long after the pause; an unchecked round makes the verdict incomplete', () => {
    const rec = new ReproRecorder();
    rec.begin(snapshot());
    rec.command({ type: 'pauseRank', rank: 2 }, stamp(0, 100, 3));
    rec.command({ type: 'resumeRank', rank: 2 }, stamp(0, 2600, 2503));
    rec.observe({
      events: [{ type: 'round', report: { ...report(0, [0, 1, 2, 3]), verdict: 'unchecked' } }],
    });
    const r = rec.draft();
    expect(r.schedule[1]).toMatchObject({ action: 'resume-rank', afterMs: 2500 });
    expect(r.schedule[0]).toMatchObject({ action: 'pause-rank', after: 'adoption' });
    expect(r.expectations.verdict).toBe('incomplete');
  });

  it('a pause resumed before its round ended waits only for the consensus: the rank adopted once resumed', () => {
    // The window's walk: rank 2 paused 30 ms into round 23, just after it deposited; the round
    // waited for its adoption ("the consensus has not reached rank(s) [2]") until the resume
    // 2574 ms in, and ended at 2590 ms with rank 2 among the adopters.
    const rec = new ReproRecorder();
    rec.begin(snapshot());
    rec.command({ type: 'pauseRank', rank: 2 }, stamp(23, 1000, 30));
    rec.command({ type: 'resumeRank', rank: 2 }, stamp(23, 3544, 2574));
    rec.observe({ events: [{ type: 'round', report: { ...report(23, [0, 1, 2, 3]), durationMs: 2590 } }] });
    const r = rec.draft();
    expect(r.schedule[0]).toMatchObject({ action: 'pause-rank', rank: 2, after: 'consensus' });
    expect(r.schedule[1]).toMatchObject({ action: 'resume-rank', rank: 2, afterMs: 2544 });
    // Resumed only after its round had ended (the round did not wait for it): the adoption came first.
    const later = new ReproRecorder();
    later.begin(snapshot());
    later.command({ type: 'pauseRank', rank: 2 }, stamp(23, 1000, 30));
    later.command({ type: 'resumeRank', rank: 2 }, stamp(23, 3544, 2574));
    later.observe({ events: [{ type: 'round', report: { ...report(23, [0, 1, 2, 3]), durationMs: 400 } }] });
    expect(later.draft().schedule[0]).toMatchObject({ action: 'pause-rank', after: 'adoption' });
  });
});
