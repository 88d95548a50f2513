// WIRE.md 6.13: an idle rank (mass 0) whose local state holds NaN. Without
// zero-elision it ships its full tensors, and 0 x NaN = NaN poisons the
// weighted consensus of every rank; with elision (flodl 0.7, data protocol v3)
// the idle contribution is true zeros and the consensus is clean. A real
// 2-host topology; the checker recomputes every round's consensus.
import type { Scenario, ScenarioContext } from './types';
import { runScenarioTopology } from './scenario-topology';
import type { HistoricalBehaviours } from '../../engine/cluster';
import { nameDecisive } from './decisive';

const ROUNDS = 2;
const IDLE = 1;

async function run(ctx: ScenarioContext, historical: HistoricalBehaviours) {
  const { report, records } = await runScenarioTopology(
    ctx,
    { ranksPerHost: [2, 1], modelBytes: 4096, rounds: ROUNDS, idleRanks: [IDLE] },
    { historical, maxMs: 15_000, recordKinds: ['RoundFrame', 'Broadcast'] },
  );
  const fromIdle = records.filter((r) => r.kind === 'RoundFrame' && r.rank === IDLE && r.dir === 'up');
  const otherFrame = records.find((r) => r.kind === 'RoundFrame' && r.rank === 0 && r.dir === 'up');
  // The decisive unit, by side: the consensus that carries the NaN (the first poisoned round's
  // Broadcast to the idle rank's host), or the idle rank's frame with its tensors elided.
  const poisoned = report.findings.find((f) => /holds NaN/.test(f.message));
  const poisonedRound = poisoned ? Number(/round (\d+)/.exec(poisoned.message)?.[1] ?? 0) : null;
  if (historical.noElision)
    nameDecisive(
      ctx,
      records,
      (r) => r.kind === 'Broadcast' && r.host === 0 && r.round === (poisonedRound ?? 0),
      (r) =>
        poisonedRound !== null
          ? `round ${r.round}'s consensus as the controller scattered it to h0: idle rank ${IDLE}'s full tensors ` +
            `(0 x NaN = NaN) made its elements NaN, and every rank adopted it`
          : `round ${r.round}'s consensus: it holds no NaN on this run (the incident did not show)`,
    );
  else
    nameDecisive(
      ctx,
      fromIdle,
      () => true,
      (r) =>
        otherFrame && r.length < otherFrame.length
          ? `idle rank ${IDLE}'s RoundFrame, ${r.length} B on the wire against rank 0's ${otherFrame.length} B: mass 0 with ` +
            `its tensors elided, so its NaN never reaches the fold`
          : `idle rank ${IDLE}'s RoundFrame, ${r.length} B: not smaller than rank 0's, its tensors were not elided`,
    );
  return {
    idleRank: IDLE,
    idleRankFrameBytes: fromIdle[0]?.length ?? null,
    otherRankFrameBytes: otherFrame?.length ?? null,
    roundsCompleted: report.roundsCompleted,
    rounds: report.rounds.map((r) => ({
      round: r.round,
      consensusSha256: r.consensusSha256,
      verdict: r.verdict,
      maxRelError:
        r.maxRelError === undefined || Number.isFinite(r.maxRelError) ? r.maxRelError : String(r.maxRelError),
      ms: Math.round(r.durationMs),
    })),
    mismatches: report.findings.filter((f) => f.kind === 'mismatch').length,
    poisonedRounds: report.findings.filter((f) => /holds NaN/.test(f.message)).length,
    findings: report.findings
      .filter((f) => /holds NaN/.test(f.message))
      .slice(0, 2)
      .map((f) => f.message),
    verdict: report.verdict,
  };
}

export const idleNaN: Scenario = {
  number: 7,
  findingKind: 'mismatch',
  name: 'idle-nan',
  title: 'An idle rank holding NaN with mass 0',
  incident: 'WIRE.md 6.13',
  historicalBehaviour: 'lab-only historical behaviour: no zero-elision, the idle rank holds NaN',
  narrative:
    'Rank 1 is idle (mass 0) and its local state is NaN. ' +
    'Historical (no elision, labelled lab-only): it ships full tensors, 0 x NaN = NaN, and every rank adopts a consensus holding NaN (look for the "holds NaN" findings). ' +
    'flodl 0.7 (zero-elision): its frame carries elided tensors (compare the frame sizes), the consensus is clean, every round verifies.',
  async historical(ctx) {
    const ev = await run(ctx, { noElision: true, idleNaN: true });
    return { reproduced: ev.verdict === 'mismatch' && ev.poisonedRounds === ROUNDS, evidence: ev };
  },
  async current(ctx) {
    const ev = await run(ctx, { idleNaN: true });
    return {
      held:
        ev.verdict === 'ok' &&
        ev.roundsCompleted === ROUNDS &&
        ev.poisonedRounds === 0 &&
        ev.rounds.every((r) => r.verdict === 'ok'),
      evidence: ev,
    };
  },
};
