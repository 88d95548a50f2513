// A reproduction's trace replayed offline shows what the trace holds: its
// run was recorded from its first round (no `start` event) and its ranks
// ended by exiting (RankExit units), so rank states come from the units, and
// each round is measured against the counters the units add up to at it
// (the session's sparse `links` events had none before round 0).
import { describe, it, expect } from 'vitest';
import { DEFAULT_TOPOLOGY } from '@shared/lab/topology';
import type { LabEvent } from '@shared/lab/contract';
import type { UnitRecord } from '@shared/lab/records';
import type { RoundReport } from '@shared/lab/records';
import type { RecordEvent, TraceEvent, TraceLink } from './format';
import { makeTraceHeader } from './ndjson';
import { TraceReplay } from './replay';

const link = (id: string, host: number, rank?: number): TraceLink => ({
  id,
  channel: 'data',
  kind: rank === undefined ? 'uplink' : 'loopback',
  from: rank === undefined ? `relay h${host}` : `rank ${rank}`,
  to: rank === undefined ? 'controller' : `relay h${host}`,
  host,
  ...(rank === undefined ? {} : { rank }),
  clientAddr: '127.0.0.1',
  clientPort: 40000,
  serverAddr: '127.0.0.1',
  serverPort: 1337,
});

let seq = 0;
function unit(t: number, linkId: string, kind: string, rank: number, length = 100): TraceEvent {
  const record: UnitRecord = {
    seq: seq++,
    t,
    link: linkId,
    dir: 'up',
    layer: kind === 'RoundFrame' ? 'lenframe' : 'mux',
    kind,
    rank,
    length,
    captured: 0,
    verdict: 'ok',
    summary: `${kind} rank=${rank}`,
  };
  return { type: 'record', t, record, bytes: new Uint8Array(0) };
}
const round = (t: number, n: number): TraceEvent => ({
  type: 'round',
  t,
  report: {
    round: n,
    accepted: [0, 1, 2],
    verdict: 'ok',
    durationMs: 1,
    uplinkBytesPerHost: [0, 0],
  } as RoundReport,
});

/** idle-nan's shape: 2 hosts [2, 1], two rounds, then every rank exits (the relay forwards each exit as DeclareDead). */
function reproTrace(edit: (events: TraceEvent[]) => TraceEvent[] = (e) => e): TraceReplay {
  seq = 0;
  const loop = ['h0.r0.data', 'h0.r1.data', 'h1.r2.data'];
  const frames = (t: number) => loop.map((id, r) => unit(t, id, 'RoundFrame', r, 1000));
  const events: TraceEvent[] = [
    ...frames(10),
    round(20, 0),
    ...frames(30),
    round(40, 1),
    unit(50, 'h0.uplink.data', 'RankExit', 0),
    unit(51, 'h0.uplink.data', 'DeclareDead', 0),
    unit(52, 'h1.uplink.data', 'RankExit', 2),
    unit(53, 'h0.uplink.data', 'RankExit', 1),
    { type: 'links', t: 60, links: [] },
  ];
  const header = makeTraceHeader({
    startedAt: 1,
    saltHex: '00'.repeat(16),
    config: { ...DEFAULT_TOPOLOGY, ranksPerHost: [2, 1], rounds: 2 },
    links: [
      ...loop.map((id, r) => link(id, r < 2 ? 0 : 1, r)),
      link('h0.uplink.data', 0),
      link('h1.uplink.data', 1),
    ],
  });
  return new TraceReplay({ header, events: edit(events), complete: true, truncatedTail: false });
}

describe('a reproduction trace replayed offline', () => {
  it('reads its ranks alive from their units and exited at their RankExit, not "starting"', () => {
    const replay = reproTrace();
    expect(replay.snapshotAt(5).ranks.map((r) => r.state)).toEqual(['starting', 'starting', 'starting']);
    const mid = replay.snapshotAt(45);
    expect(mid.ranks.map((r) => r.state)).toEqual(['alive', 'alive', 'alive']);
    expect(mid.roundsCompleted).toBe(2);
    const end = replay.snapshotAt(replay.duration);
    // Rank 0's exit was forwarded as DeclareDead: still a clean exit.
    expect(end.ranks.map((r) => r.state)).toEqual(['exited', 'exited', 'exited']);
    // Every rank of each host exited: its relay is stopped, as the live window draws it after Stop.
    expect(end.hosts.map((h) => h.state)).toEqual(['stopped', 'stopped']);
    expect(mid.hosts.map((h) => h.state)).toEqual(['up', 'up']);
  });

  it("a unit on a rank's own leg that names no rank (its channel magic) is the rank's too", () => {
    const magic = unit(1, 'h0.r1.data', 'DATA magic', 1) as RecordEvent;
    const replay = reproTrace((events) => [
      { ...magic, record: { ...magic.record, rank: undefined } },
      ...events,
    ]);
    expect(replay.snapshotAt(2).ranks.map((r) => r.state)).toEqual(['starting', 'alive', 'starting']);
  });

  it('a DeclareDead with no RankExit before it is a death', () => {
    const replay = reproTrace((events) =>
      events.map((e) =>
        e.type === 'record' && e.record.kind === 'RankExit' && e.record.rank === 2
          ? unit(e.t, 'h1.uplink.data', 'DeclareDead', 2)
          : e,
      ),
    );
    expect(replay.snapshotAt(replay.duration).ranks.map((r) => r.state)).toEqual([
      'exited',
      'exited',
      'dead',
    ]);
    expect(replay.snapshotAt(replay.duration).hosts[1]!.state).toBe('dead');
  });

  it('puts the counters at each round before its report, so every round after the first is measured', () => {
    const replay = reproTrace();
    const evs: LabEvent[] = replay.labEventsUntil(replay.duration);
    const before = (n: number) => {
      const i = evs.findIndex((e) => e.type === 'round' && e.report.round === n);
      const prev = evs[i - 1]!;
      expect(prev.type).toBe('links');
      return prev.type === 'links' ? prev.links : [];
    };
    const r0 = before(0).find((l) => l.id === 'h0.r1.data')!;
    const r1 = before(1).find((l) => l.id === 'h0.r1.data')!;
    expect(r0.bytesUp).toBe(1000);
    expect(r1.bytesUp).toBe(2000);
  });
});
