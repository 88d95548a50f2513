// The whole engine with real rank processes on real sockets: a clean fold
// run with exact byte accounting, fold against direct, a rank killed
// mid-round, a paused rank, a killed host under both policies, the session's
// commands and events, and no process left behind.
import { afterEach, describe, expect, it } from 'vitest';
import type { LabBatch, LabEvent } from '@shared/lab/contract';
import { DEFAULT_TOPOLOGY, type TopologyConfig } from '@shared/lab/topology';
import { roundFrameWireLen } from '@shared/wire/round-frame';
import { pidAlive } from '../engine/rank-process';
import { modelLayout } from '@shared/synthetic';
import type { Tap } from '../engine/tap';
import { runTopology } from './run-topology';
import type { Fault } from './round-driver';
import { TopologySession } from './topology-session';

const MODEL = 4096;
const base: TopologyConfig = {
  ...DEFAULT_TOPOLOGY,
  ranksPerHost: [2, 2],
  modelBytes: MODEL,
  rounds: 3,
  roundIntervalMs: 0,
  stalenessMs: 3000,
};

/** Wire length of one rank's (non-elided, f32) RoundFrame for the test model. */
const frameLen = roundFrameWireLen({
  roundKind: 0,
  weight: 1,
  tensors: modelLayout(MODEL).shapes.map((dims) => ({
    dtype: 0,
    dims,
    data: new Uint8Array(dims.reduce((a, b) => a * b, 1) * 4),
  })),
});

const pidsSeen: number[] = [];
afterEach(() => {
  // No process left behind after any test.
  const alive = pidsSeen.splice(0).filter(pidAlive);
  expect(alive).toEqual([]);
});

async function run(config: Partial<TopologyConfig>, faults: Fault[] = [], snapLen = 0) {
  let session: TopologySession | null = null;
  const report = await runTopology(
    { ...base, ...config },
    { faults, snapLen, onSession: (s) => (session = s) },
  );
  const s = session! as TopologySession;
  pidsSeen.push(...s.activeCluster!.ranks.map((p) => p.pid!));
  return { report, session: s, tap: s.activeCluster!.tap };
}

describe('a whole topology with real rank processes', () => {
  it('fold: every round verified, exact bytes on every data link', async () => {
    const { report, tap } = await run({});
    expect(report.verdict).toBe('ok');
    expect(report.roundsCompleted).toBe(3);
    expect(report.rounds.map((r) => r.accepted)).toEqual([
      [0, 1, 2, 3],
      [0, 1, 2, 3],
      [0, 1, 2, 3],
    ]);
    const links = new Map(report.links.map((l) => [l.id, l]));
    for (const r of [0, 1, 2, 3]) {
      const l = links.get(`h${r < 2 ? 0 : 1}.r${r}.data`)!;
      // handshake 16 B + ack 8 B, then one len-framed frame each way per round.
      expect(l.bytesUp).toBe(16 + 3 * (4 + frameLen));
      expect(l.bytesDown).toBe(8 + 3 * (4 + frameLen));
      expect(l.units).toBe(2 + 2 * 3);
      // The real TCP endpoints: the rank dialed the relay's loopback listener.
      expect(l.endpoints!.serverPort).toBe(tap.getLink(l.id)!.info.endpoints!.serverPort);
      expect(l.endpoints!.clientPort).not.toBe(l.endpoints!.serverPort);
    }
    for (const h of [0, 1]) {
      const up = links.get(`h${h}.uplink.data`)!;
      const recs = tapRecords(tap, up.id);
      const rankExits = recs.filter((x) => x.kind === 'RankExit' && x.dir === 'up').length;
      const hello = recs.find((x) => x.kind === 'Hello')!.length;
      // DATA magic, Hello, one HostFrame per round (25-byte mux header + frame), RankExits at teardown.
      expect(up.bytesUp).toBe(4 + hello + 3 * (25 + frameLen) + rankExits * 27);
      expect(recs.filter((x) => x.kind === 'HostFrame').every((x) => x.length === 25 + frameLen)).toBe(true);
      expect(report.uplinkBytesPerHost[h]).toBe(up.bytesUp + links.get(`h${h}.uplink.control`)!.bytesUp);
    }
    // Every unit of a round carries it: `kind == RoundFrame && round > 0` finds rows (issue 10).
    const roundUnits = tapRecords(tap, null).filter((x) =>
      ['RoundFrame', 'HostFrame', 'Broadcast'].includes(x.kind),
    );
    expect(roundUnits.filter((x) => x.round === undefined).map((x) => `${x.link} ${x.kind}`)).toEqual([]);
    for (const kind of ['RoundFrame', 'HostFrame', 'Broadcast'])
      expect(
        [...new Set(roundUnits.filter((x) => x.kind === kind).map((x) => x.round))].sort(),
        kind,
      ).toEqual([0, 1, 2]);
    // Per rank link: one frame up and one consensus down per round, each carrying its round.
    const r3 = tapRecords(tap, 'h1.r3.data').filter((x) => x.kind === 'RoundFrame');
    expect(r3.map((x) => `${x.dir}${x.round}`).sort()).toEqual([
      'down0',
      'down1',
      'down2',
      'up0',
      'up1',
      'up2',
    ]);
    // The savings' K: the ranks each host folded, every round.
    expect(report.rounds.map((r) => r.foldedPerHost)).toEqual(
      new Array(3).fill([
        [0, 1],
        [2, 3],
      ]),
    );
  });

  it('bf16 wire, several shapes, and an idle rank shipping elided tensors: verified, nothing poisoned', async () => {
    const shapes = [[8, 16], [5], [3, 3, 3]];
    const { report } = await run({ ranksPerHost: [3], rounds: 2, dtype: 'bf16', shapes, idleRanks: [1] });
    expect(report.verdict).toBe('ok');
    expect(report.rounds.map((r) => r.accepted)).toEqual([
      [0, 1, 2],
      [0, 1, 2],
    ]);
    const elided = roundFrameWireLen({
      roundKind: 0,
      weight: 0,
      tensors: shapes.map((dims) => ({ dtype: 1, dims, data: null })),
    });
    const idleLink = report.links.find((l) => l.id === 'h0.r1.data')!;
    expect(idleLink.bytesUp).toBe(16 + 2 * (4 + elided));
  });

  it('fold against direct: the uplink carries 1/K of the frames, exactly as counted', async () => {
    const fold = await run({ ranksPerHost: [3], rounds: 2 });
    const direct = await run({ ranksPerHost: [3], rounds: 2, mode: 'direct' });
    const forward = await run({ ranksPerHost: [3], rounds: 2, mode: 'forward' });
    for (const r of [fold, direct, forward]) expect(r.report.verdict).toBe('ok');
    const dataUp = (rep: typeof fold.report, kind: string) =>
      tapRecords(rep === fold.report ? fold.tap : rep === direct.report ? direct.tap : forward.tap, null)
        .filter((x) => x.dir === 'up' && x.kind === kind && x.link.includes('uplink.data'))
        .reduce((a, x) => a + x.length, 0);
    expect(dataUp(fold.report, 'HostFrame')).toBe(2 * (25 + frameLen));
    expect(dataUp(direct.report, 'RoundFrame')).toBe(3 * 2 * (4 + frameLen));
    expect(dataUp(forward.report, 'HostFrame')).toBe(3 * 2 * (25 + frameLen));
    expect(
      direct.report.links
        .filter((l) => l.kind === 'uplink')
        .map((l) => l.id)
        .sort(),
    ).toEqual([
      'r0.uplink.control',
      'r0.uplink.data',
      'r1.uplink.control',
      'r1.uplink.data',
      'r2.uplink.control',
      'r2.uplink.data',
    ]);
  });

  it('a rank killed mid-round: the host folds the survivors and the verdict is ok', async () => {
    const { report } = await run({ rounds: 3 }, [{ action: 'kill-rank', target: 1, round: 1 }]);
    expect(report.verdict).toBe('ok');
    expect(report.roundsCompleted).toBe(3);
    expect(report.dead).toContain(1);
    expect(report.rounds[2].accepted).toEqual([0, 2, 3]);
    expect(report.rounds.every((r) => r.verdict === 'ok')).toBe(true);
  });

  it('a paused rank is declared dead after the staleness; the barrier names it, then releases', async () => {
    const { report, tap } = await run({ rounds: 3, stalenessMs: 1500 }, [
      { action: 'pause-rank', target: 2, round: 1 },
    ]);
    expect(report.verdict).toBe('ok');
    expect(report.dead).toEqual([2]);
    expect(report.rounds[2].accepted).toEqual([0, 1, 3]);
    const stalled = report.findings.find((f) => f.kind === 'stalled');
    expect(stalled?.ranks).toEqual([2]);
    // The round it is about, so the window can mark it resolved when that round completes.
    expect(stalled?.round).toBe(1);
    const dead = report.findings.find(
      (f) => f.kind === 'dead' && /no heartbeat/.test(f.message) && f.ranks?.[0] === 2,
    );
    expect(dead).toBeDefined();
    // The finding points at the DeclareDead the controller sent to the rank's relay.
    expect(tap.findRecord(dead!.recordSeq!)).toMatchObject({
      kind: 'DeclareDead',
      rank: 2,
      link: 'h1.uplink.data',
      dir: 'down',
    });
  });

  it('a killed host: elastic goes on with the survivors, strict shuts the reduce down', async () => {
    const elastic = await run({ rounds: 3 }, [{ action: 'kill-host', target: 1, round: 1 }]);
    expect(elastic.report.verdict).toBe('ok');
    expect(elastic.report.roundsCompleted).toBe(3);
    expect(elastic.report.dead).toEqual([2, 3]);
    expect(elastic.report.rounds[2].accepted).toEqual([0, 1]);
    const strict = await run({ rounds: 3, policy: 'strict' }, [{ action: 'kill-host', target: 1, round: 1 }]);
    expect(strict.report.roundsCompleted).toBe(1);
    expect(strict.report.ended).toMatch(/strict/);
  });

  it('a host a person kills under strict ends the reduce by design, as a scheduled kill does (not incomplete)', async () => {
    let session: TopologySession | null = null;
    let killed = false;
    const report = await runTopology(
      { ...base, rounds: 100_000, policy: 'strict', roundIntervalMs: 20 },
      {
        onSession: (s) => {
          session = s;
          s.subscribe((b: LabBatch) => {
            if (killed || !b.events.some((e) => e.type === 'round')) return;
            killed = true;
            void s.command({ type: 'killHost', host: 1 });
          });
        },
      },
    );
    pidsSeen.push(...(session! as TopologySession).activeCluster!.ranks.map((p) => p.pid!));
    expect(report.roundsCompleted).toBeLessThan(100_000);
    expect(report.ended).toMatch(/strict/);
    expect(report.faults).toEqual([]);
    expect(report.findings.some((f) => f.kind === 'fault' && /kill host h1/.test(f.message))).toBe(true);
    expect(report.verdict).toBe('ok');
  });
});

describe('TopologySession commands and events', () => {
  it('streams records, links and rounds; serves captured bytes; pauses and steps; stops cleanly', async () => {
    const session = new TopologySession();
    const events: LabEvent[] = [];
    session.subscribe((b: LabBatch) => events.push(...b.events));
    const started = await session.command({
      type: 'start',
      config: { ...base, rounds: 0, roundIntervalMs: 0 },
    });
    expect(started.ok).toBe(true);
    pidsSeen.push(...session.activeCluster!.ranks.map((p) => p.pid!));
    const rounds = () => events.filter((e) => e.type === 'round').length;
    await expect.poll(rounds, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    expect((await session.command({ type: 'pauseRounds' })).ok).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    const paused = rounds();
    await new Promise((r) => setTimeout(r, 200));
    expect(rounds()).toBe(paused);
    await session.command({ type: 'stepRound' });
    await expect.poll(rounds, { timeout: 10_000 }).toBe(paused + 1);
    const recs = events.flatMap((e) => (e.type === 'records' ? e.records : []));
    const frame = recs.find((r) => r.kind === 'HostFrame')!;
    const bytes = await session.command({ type: 'getRecordBytes', seq: frame.seq });
    expect(bytes.ok && bytes.bytes!.length).toBe(25 + frameLen);
    expect(bytes.ok && bytes.bytes!.hex.length).toBe(2 * (25 + frameLen));
    expect(bytes.ok && bytes.bytes!.hex.startsWith('d0170df101000000')).toBe(true);
    expect(
      events.some(
        (e) => e.type === 'links' && e.links.some((l) => l.id === 'h0.uplink.data' && l.bytesUp > 0),
      ),
    ).toBe(true);
    expect(((await session.command({ type: 'killRank', rank: 9 })) as { error: string }).error).toBe(
      'BAD_TARGET',
    );
    await session.command({ type: 'killRank', rank: 3 });
    await session.command({ type: 'resumeRounds' });
    await expect
      .poll(() => events.some((e) => e.type === 'round' && !e.report.accepted.includes(3)), {
        timeout: 10_000,
      })
      .toBe(true);
    const snap = await session.command({ type: 'snapshot' });
    expect(snap.ok && snap.snapshot!.ranks[3].state).toBe('dead');
    expect(
      events.filter((e) => e.type === 'round').every((e) => e.type === 'round' && e.report.verdict === 'ok'),
    ).toBe(true);
    await session.command({ type: 'stop' });
    expect(session.snapshot().running).toBe(false);
    // A clean stop is not a death: the ranks it ended exited (as the trace of the same stop says),
    // the relays it closed are stopped; rank 3, killed before the stop, stays dead.
    const after = session.snapshot();
    expect(after.ranks.map((r) => r.state)).toEqual(['exited', 'exited', 'exited', 'dead']);
    expect(after.hosts.map((h) => h.state)).toEqual(['stopped', 'stopped']);
  });
});

function tapRecords(tap: Tap, link: string | null) {
  const out = [];
  for (let s = 0; s < tap.recordCount; s++) {
    const r = tap.findRecord(s);
    if (r && (link === null || r.link === link)) out.push(r);
  }
  return out;
}
