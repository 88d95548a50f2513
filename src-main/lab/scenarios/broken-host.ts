// WIRE.md 6.7: one broken host killed the whole reduce. Host h1 dies (its
// relay's sockets destroyed, its rank killed) while the controller is writing
// round 1's consensus to it, so the scatter's write to h1 fails. Historical
// (fail-fast scatter): that write error stops the reduce for every host.
// flodl 0.7 (elastic scatter): the failed write declares h1's ranks dead and
// the other hosts finish every round.
import type { Scenario, ScenarioContext } from './types';
import { findingLines, runScenarioTopology } from './scenario-topology';
import type { HistoricalBehaviours } from '../../engine/cluster';
import { nameDecisive } from './decisive';

const ROUNDS = 3;
const BROKEN_HOST = 1;
const BREAK_AT_ROUND = 1;
/** Several write slices, so the consensus is still being written when the host dies. */
const MODEL_BYTES = 4 * 1024 * 1024;

async function run(ctx: ScenarioContext, historical: HistoricalBehaviours) {
  let scatterError: string | null = null;
  let brokeDuringScatter = false;
  const { report, records } = await runScenarioTopology(
    ctx,
    { ranksPerHost: [1, 1, 1], modelBytes: MODEL_BYTES, rounds: ROUNDS },
    {
      historical,
      maxMs: 20_000,
      recordKinds: ['Broadcast'],
      onCluster: (c) => {
        c.controller.on((e) => {
          if (e.type === 'round' && e.round === BREAK_AT_ROUND) {
            // The consensus for h1 is queued on its connection right now: the host dies under the write.
            brokeDuringScatter = true;
            c.killHost(BROKEN_HOST);
          }
          if (
            (e.type === 'shutdown' || e.type === 'error') &&
            /scatter/.test(
              (e as { reason?: string; message?: string }).reason ??
                (e as { message?: string }).message ??
                '',
            )
          ) {
            scatterError ??=
              (e as { reason?: string; message?: string }).reason ??
              (e as { message?: string }).message ??
              null;
          }
        });
      },
    },
  );
  // Fail-fast: the scatter the host died under is the point (flodl 0.7's side is found by the
  // picture's rules: the DeclareDead of h1's rank, the first warning).
  if (historical.failFastScatter) {
    const scatter = (r: { kind: string; round?: number }) =>
      r.kind === 'Broadcast' && r.round === BREAK_AT_ROUND;
    const toBroken = records.some((r) => scatter(r) && r.host === BROKEN_HOST);
    nameDecisive(
      ctx,
      records,
      (r) => scatter(r) && (!toBroken || r.host === BROKEN_HOST),
      (r) =>
        `round ${BREAK_AT_ROUND}'s consensus, scattered while h${BROKEN_HOST} died` +
        (r.host === BROKEN_HOST
          ? ''
          : ` (the one to h${BROKEN_HOST} never completed; this is h${r.host}'s)`) +
        (scatterError
          ? `: fail-fast, the failed write ended the reduce for every host (${scatterError})`
          : ': the write error did not end the reduce on this run'),
    );
  }
  return {
    brokenHost: `h${BROKEN_HOST}`,
    brokenAtRound: BREAK_AT_ROUND,
    brokeDuringScatter,
    modelBytes: MODEL_BYTES,
    roundsCompleted: report.roundsCompleted,
    roundsRequested: ROUNDS,
    rounds: report.rounds.map((r) => ({
      round: r.round,
      accepted: r.accepted,
      consensusSha256: r.consensusSha256,
    })),
    dead: report.dead,
    scatterError,
    findings: findingLines(report, ['dead'], 3),
    ended: report.ended,
  };
}

export const brokenHost: Scenario = {
  number: 8,
  findingKind: 'dead',
  name: 'broken-host',
  title: 'One broken host: fail-fast vs elastic scatter',
  incident: 'WIRE.md 6.7',
  historicalBehaviour: 'lab-only historical behaviour: fail-fast scatter',
  narrative:
    `Three hosts of one rank each; host h${BROKEN_HOST} dies while the controller writes round ${BREAK_AT_ROUND}'s ${MODEL_BYTES / (1024 * 1024)} MiB consensus to it. ` +
    'Historical (fail-fast scatter, labelled lab-only): the failed write ends the reduce for everyone: look at roundsCompleted and the scatter error. ' +
    `flodl 0.7 (elastic scatter): h${BROKEN_HOST}'s rank is declared dead and h0 and h2 finish all ${ROUNDS} rounds.`,
  async historical(ctx) {
    const ev = await run(ctx, { failFastScatter: true });
    return {
      reproduced: ev.brokeDuringScatter && ev.scatterError !== null && ev.roundsCompleted < ROUNDS,
      evidence: ev,
    };
  },
  async current(ctx) {
    const ev = await run(ctx, {});
    const survivors = ev.rounds.filter((r) => r.round > BREAK_AT_ROUND);
    return {
      held:
        ev.brokeDuringScatter &&
        ev.roundsCompleted === ROUNDS &&
        ev.dead.includes(BROKEN_HOST) &&
        survivors.length > 0 &&
        survivors.every((r) => !r.accepted.includes(BROKEN_HOST) && r.accepted.length === 2),
      evidence: ev,
    };
  },
};
