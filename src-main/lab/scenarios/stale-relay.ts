// WIRE.md 6.11: a stale (pre-fold) relay build sending per-rank Data records
// on the data channel of a fold-era controller. The controller refuses loudly,
// naming the likely cause ("mixed relay/controller builds?"), instead of
// silently mis-accounting; with matching builds the round verifies.
import type { Scenario, ScenarioContext } from './types';
import { findingLines, runScenarioTopology } from './scenario-topology';
import type { HistoricalBehaviours } from '../../engine/cluster';
import { nameDecisive } from './decisive';

async function run(ctx: ScenarioContext, historical: HistoricalBehaviours) {
  const { report, records } = await runScenarioTopology(
    ctx,
    { ranksPerHost: [2, 1], modelBytes: 4096, rounds: 1 },
    { historical, maxMs: 8000, recordKinds: ['Data', 'HostFrame'] },
  );
  const upData = records.filter((r) => r.link.endsWith('uplink.data') && r.dir === 'up');
  const refusal = report.findings.find((f) => /mixed relay\/controller builds/.test(f.message));
  // Historical: the refused Data record is found by the picture's rules (the controller's finding).
  // flodl 0.7 has nothing refused: the unit to look at is h0's fold of its two ranks.
  if (!historical.staleRelayBuild)
    nameDecisive(
      ctx,
      upData,
      (r) => r.kind === 'HostFrame' && r.host === 0,
      (r) =>
        `h0's two ranks folded into one HostFrame (${r.length} B, ${r.verdict === 'ok' ? 'accepted' : r.verdict}): ` +
        `the fold-era protocol the controller expects`,
    );
  return {
    uplinkRecords: upData
      .slice(0, 4)
      .map((r) => `${r.kind}${r.rank !== undefined ? ` r=${r.rank}` : ''} ${r.length} B ${r.verdict}`),
    refusal: refusal ? `${refusal.kind}: ${refusal.message}` : null,
    findings: findingLines(report, ['rejected', 'hmac'], 2),
    roundsCompleted: report.roundsCompleted,
    ended: report.ended,
    verdict: report.verdict,
  };
}

export const staleRelay: Scenario = {
  number: 10,
  findingKind: 'rejected',
  name: 'stale-relay',
  title: 'A stale relay build sending per-rank Data on the data channel',
  incident: 'WIRE.md 6.11',
  historicalBehaviour: 'lab-only historical behaviour: a pre-fold relay build sending per-rank Data',
  narrative:
    'Historical (a pre-fold relay build, labelled lab-only): each rank frame goes up as its own Data record on the data channel; the controller refuses it with a named error pointing at "mixed relay/controller builds?" (look at the uplink records and the finding). ' +
    'flodl 0.7: the relay folds its ranks into one HostFrame per round and the round verifies.',
  async historical(ctx) {
    const ev = await run(ctx, { staleRelayBuild: true });
    return { reproduced: ev.refusal !== null && ev.verdict !== 'ok', evidence: ev };
  },
  async current(ctx) {
    const ev = await run(ctx, {});
    return { held: ev.refusal === null && ev.verdict === 'ok' && ev.roundsCompleted === 1, evidence: ev };
  },
};
