// Issue 30 #3 on real rank processes and sockets: each round's data bytes,
// counted unit by unit, are the sweep theory's exactly (fold 25 + F,
// forward K x (25 + F), direct K x (4 + F); one rank 4 + F) whatever the
// model size, dtype, mode and round interval, and the rounds plus the
// connections' setup add up to the link counters byte for byte.
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_TOPOLOGY, type TopologyConfig, type UplinkMode } from '@shared/lab/topology';
import { RoundByteLedger } from '@shared/lab/round-bytes';
import { dataUpBytes, LEN_PREFIX_BYTES, roundFrameBytes } from '@shared/sweep/theory';
import { pidAlive } from '../engine/rank-process';
import { runTopology } from './run-topology';
import { compareModes } from './compare';
import type { TopologySession } from './topology-session';

const pidsSeen: number[] = [];
afterEach(() => {
  expect(pidsSeen.splice(0).filter(pidAlive)).toEqual([]);
});

async function check(config: Partial<TopologyConfig>) {
  const cfg: TopologyConfig = {
    ...DEFAULT_TOPOLOGY,
    rounds: 5,
    roundIntervalMs: 50,
    stalenessMs: 10_000,
    ...config,
  };
  let session: TopologySession | null = null;
  const report = await runTopology(cfg, { onSession: (s) => (session = s) });
  const cluster = (session as TopologySession | null)!.activeCluster!;
  pidsSeen.push(...cluster.ranks.map((p) => p.pid!));
  expect(report.verdict).toBe('ok');
  const F = roundFrameBytes(cfg.modelBytes, cfg.dtype, cfg.shapes);
  const hosts = cfg.ranksPerHost.length;
  for (const r of report.rounds) {
    const k = r.foldedPerHost!.map((x) => x.length);
    expect(k).toEqual(cfg.ranksPerHost);
    expect(r.dataUpBytesPerHost, `round ${r.round}`).toEqual(k.map((kh) => dataUpBytes(cfg.mode, kh, F)));
    expect(r.rankDataUpBytes).toEqual(k.map((kh) => new Array(kh).fill(LEN_PREFIX_BYTES + F)));
  }
  // The same units again, through a fresh ledger: every round as reported, and the rounds, the
  // setup and the teardown (RankExit as the ranks leave) are every byte the counters saw.
  const ledger = new RoundByteLedger();
  const links = new Map(report.links.map((l) => [l.id, l]));
  for (const u of cluster.tap.heldRecords) ledger.unit(u, links.get(u.link));
  const attributed = new Array<number>(hosts).fill(0);
  for (let r = 0; r <= report.rounds.length; r++) {
    const b = ledger.take(r, hosts);
    if (r < report.rounds.length) expect(b.hostUp).toEqual(report.rounds[r].dataUpBytesPerHost);
    b.hostUp.forEach((n, h) => (attributed[h] += n));
  }
  for (let h = 0; h < hosts; h++) {
    const counter = report.links
      .filter((l) => l.kind === 'uplink' && l.channel === 'data' && l.host === h)
      .reduce((a, l) => a + l.bytesUp, 0);
    expect(attributed[h] + (ledger.setupUp.get(h) ?? 0), `h${h}`).toBe(counter);
    expect(ledger.lateUp.get(h) ?? 0).toBe(0);
  }
  return report;
}

describe('per-round data bytes by unit (issue 30 #3)', { timeout: 120_000 }, () => {
  for (const mode of ['fold', 'forward', 'direct'] as UplinkMode[])
    it(`${mode}: 4 hosts of K = 2, 2, 1, 1, a 10 KiB model, 50 ms apart`, async () => {
      await check({ mode, ranksPerHost: [2, 2, 1, 1], modelBytes: 10 * 1024 });
    });

  it('fold, bf16, a 1 MiB model (512 KiB frames), back to back', async () => {
    await check({
      ranksPerHost: [2, 1],
      modelBytes: 1024 * 1024,
      dtype: 'bf16',
      rounds: 3,
      roundIntervalMs: 0,
    });
  });

  it('Compare modes: the same figures, and the theory with its headers (not 1/K)', async () => {
    const cfg = { ...DEFAULT_TOPOLOGY, ranksPerHost: [2, 1], modelBytes: 10 * 1024 };
    const F = roundFrameBytes(cfg.modelBytes, cfg.dtype);
    const rows = await compareModes(cfg, 2);
    for (const row of rows) {
      expect(row.rounds).toBe(2);
      expect(row.uplinkBytesPerHostPerRound).toEqual(
        cfg.ranksPerHost.map((k) => dataUpBytes(row.mode, k, F)),
      );
      const theory = cfg.ranksPerHost.map((k) => dataUpBytes(row.mode, k, F) / dataUpBytes('direct', k, F));
      expect(row.theoryRatio).toEqual(theory);
      row.ratioToDirect.forEach((r, h) => expect(r).toBeCloseTo(theory[h], 12));
    }
  });
});
