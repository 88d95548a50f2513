// WIRE.md 6.6: a wedged but connected local rank (paused with SIGSTOP: its
// sockets stay open, it sends nothing). The coordinator declares it dead
// after the heartbeat staleness; without DeclareDead forwarding (historical)
// its relay never hears of it and the host's fold barrier waits for it
// forever (bounded here by a deadline). With forwarding (flodl 0.7) the
// barrier is released after the staleness, the rounds go on without it, and
// the checker names the rank it waited for.
import type { Scenario, ScenarioContext } from './types';
import { findingLines, runScenarioTopology } from './scenario-topology';
import type { HistoricalBehaviours } from '../../engine/cluster';
import { nameDecisive } from './decisive';

const ROUNDS = 3;
// Heartbeats go every staleness / 4. At 400 ms a loaded machine (load average ~10) let
// healthy ranks' heartbeats lapse 408-566 ms and declared them dead too; 1 s keeps the
// scenario about the wedged rank alone and still ends in seconds.
const STALENESS_MS = 1000;
const HISTORICAL_DEADLINE_MS = 3500;
const WEDGED = 1;

async function run(ctx: ScenarioContext, historical: HistoricalBehaviours, maxMs: number) {
  // What host h0's fold barrier is waiting for just before the deadline ends the run.
  let barrierAtDeadline: number[] | null = null;
  let timer: NodeJS.Timeout | undefined;
  const { report, records } = await runScenarioTopology(
    ctx,
    { ranksPerHost: [2, 2], modelBytes: 4096, rounds: ROUNDS, stalenessMs: STALENESS_MS },
    {
      historical,
      maxMs,
      faults: [{ action: 'pause-rank', target: WEDGED, round: 1 }],
      recordKinds: ['DeclareDead'],
      onCluster: (c) => {
        timer = setTimeout(() => (barrierAtDeadline = c.relays[0]?.waitingFor() ?? []), maxMs - 100);
      },
    },
  );
  clearTimeout(timer);
  // flodl 0.7's point is the forwarded DeclareDead on h0's uplink that releases the barrier (the
  // picture's rules would take the stalled finding's unit, before it). Historical has none: there
  // the stalled finding's unit, the wedged rank's last consensus before it went silent, stands.
  if (!historical.noDeclareDead)
    nameDecisive(
      ctx,
      records,
      (r) => r.kind === 'DeclareDead' && r.rank === WEDGED && r.link === 'h0.uplink.data' && r.dir === 'down',
      () =>
        `the controller forwards DeclareDead for wedged rank ${WEDGED} to its relay after ${STALENESS_MS} ms of ` +
        `staleness: h0's fold barrier is released and the rounds go on without it`,
    );
  // The checker's findings that name ranks: the barrier's wait (stalled) and the death (dead).
  const naming = report.findings.filter((f) => f.kind === 'stalled' || f.kind === 'dead');
  return {
    wedgedRank: WEDGED,
    stalenessMs: STALENESS_MS,
    deadlineMs: maxMs,
    roundsCompleted: report.roundsCompleted,
    roundsRequested: ROUNDS,
    rounds: report.rounds.map((r) => ({
      round: r.round,
      consensusSha256: r.consensusSha256,
      accepted: r.accepted,
      ms: Math.round(r.durationMs),
    })),
    declaredDead: report.dead,
    declareDeadRecords: records
      .filter((r) => r.rank === WEDGED || r.summary.endsWith(`rank=${WEDGED}`))
      .map((r) => `${r.link} ${r.summary}`),
    checkerNamed: [...new Set(naming.flatMap((f) => f.ranks ?? []))],
    barrierWaitedFor: [...new Set(naming.filter((f) => f.kind === 'stalled').flatMap((f) => f.ranks ?? []))],
    findings: findingLines(report, ['stalled', 'dead'], 3),
    relayBarrierWaitingForAtDeadline: barrierAtDeadline as number[] | null,
    ended: report.ended,
  };
}

export const wedgedRank: Scenario = {
  number: 3,
  findingKind: 'stalled',
  name: 'wedged-rank',
  title: 'A wedged but connected rank and DeclareDead forwarding',
  incident: 'WIRE.md 6.6',
  historicalBehaviour: 'lab-only historical behaviour: no DeclareDead forwarding from the controller',
  narrative:
    `Rank ${WEDGED} is paused (SIGSTOP) at round 1: connected, silent. The coordinator declares it dead after ${STALENESS_MS} ms of heartbeat staleness. ` +
    `Historical (no DeclareDead forwarding): its relay never learns it, host h0's fold barrier keeps waiting (stopped at a ${HISTORICAL_DEADLINE_MS} ms deadline; in flodl, forever): look for the stalled finding and the rounds that never complete. ` +
    "flodl 0.7: the controller forwards DeclareDead to the rank's relay (see the DeclareDead record on h0's uplink), the barrier is released, every round completes without it, and the checker names it.",
  async historical(ctx) {
    const ev = await run(ctx, { noDeclareDead: true }, HISTORICAL_DEADLINE_MS);
    const stillWaiting =
      /deadline/.test(ev.ended) &&
      ev.roundsCompleted < ROUNDS &&
      (ev.relayBarrierWaitingForAtDeadline ?? []).includes(WEDGED);
    return {
      reproduced:
        stillWaiting &&
        ev.declaredDead.includes(WEDGED) &&
        ev.declareDeadRecords.length === 0 &&
        ev.barrierWaitedFor.includes(WEDGED),
      evidence: { ...ev, barrierStillWaitingAtDeadline: stillWaiting },
    };
  },
  async current(ctx) {
    const ev = await run(ctx, {}, 15_000);
    // The round the wedge bit, released once the staleness declared the rank dead (the longest round after the pause).
    const releasedAfterMs = Math.max(0, ...ev.rounds.filter((r) => r.round >= 1).map((r) => r.ms));
    return {
      held:
        ev.roundsCompleted === ROUNDS &&
        ev.declaredDead.includes(WEDGED) &&
        ev.declareDeadRecords.length > 0 &&
        ev.checkerNamed.includes(WEDGED),
      evidence: { ...ev, releasedAfterMs },
    };
  },
};
