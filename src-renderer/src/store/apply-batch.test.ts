import { describe, it, expect } from 'vitest';
import type { LabBatch } from '@shared/lab/contract';
import { applyBatches, emptyLabData, recentSavings, MAX_FINDINGS_KEPT } from './apply-batch';
import { RecordRing } from './record-ring';
import { record, snapshot, links } from '../test-fixtures';

describe('applyBatches', () => {
  it('applies snapshot, records, links, rounds and findings from one frame in order', () => {
    const ring = new RecordRing(100);
    const batches: LabBatch[] = [
      { events: [{ type: 'snapshot', snapshot: snapshot() }] },
      { events: [{ type: 'records', records: [record(1), record(2)], droppedBefore: 3 }] },
      {
        events: [
          { type: 'records', records: [record(3)], droppedBefore: 0 },
          {
            type: 'finding',
            finding: { id: 1, t: 5, severity: 'error', kind: 'hmac', message: 'bad tag', recordSeq: 2 },
          },
        ],
      },
    ];
    const { data, newRecords, reset } = applyBatches(emptyLabData(), batches, ring, 1000);
    expect(reset).toBe(false);
    expect(newRecords.map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(ring.size).toBe(3);
    expect(ring.droppedUpstream).toBe(3);
    expect(data.snapshot?.hosts.map((h) => h.name)).toEqual(['h0', 'h1']);
    expect(data.findings.map((f) => f.recordSeq)).toEqual([2]);
    expect(data.recordsVersion).toBe(1);
  });

  it('computes link rates from counter deltas over time', () => {
    const ring = new RecordRing(10);
    let d = applyBatches(
      emptyLabData(),
      [{ events: [{ type: 'snapshot', snapshot: snapshot() }] }],
      ring,
      1000,
    ).data;
    d = applyBatches(
      d,
      [{ events: [{ type: 'links', links: links((id) => (id === 'h0.uplink.data' ? 1000 : 0)) }] }],
      ring,
      2000,
    ).data;
    // One second, 1000 bytes.
    expect(d.linkRates['h0.uplink.data'].up).toBeCloseTo(1000, 6);
    // Bursty counters (all bytes in every other sample) still read as the mean rate over the window.
    for (let i = 2; i < 40; i++)
      d = applyBatches(
        d,
        [
          {
            events: [
              {
                type: 'links',
                links: links((id) => (id === 'h0.uplink.data' ? 3000 * Math.floor(i / 2) : 0)),
              },
            ],
          },
        ],
        ring,
        1000 + 500 * i,
      ).data;
    expect(d.linkRates['h0.uplink.data'].up).toBeGreaterThan(2000);
    expect(d.linkRates['h0.uplink.data'].up).toBeLessThan(4000);
    expect(d.linkSamples.length).toBeLessThanOrEqual(6);
    expect(d.linkRates['h1.uplink.data'].up).toBe(0);
  });

  it('turns round reports and rank counters into K x direct savings points', () => {
    const ring = new RecordRing(10);
    const perRank = 4 * 1024 * 1024 + 40;
    let d = applyBatches(
      emptyLabData(),
      [{ events: [{ type: 'snapshot', snapshot: snapshot() }] }],
      ring,
      0,
    ).data;
    for (let round = 0; round < 6; round++) {
      const rankBytes = (id: string) => (/\.r\d+\./.test(id) ? perRank * (round + 1) : 0);
      d = applyBatches(
        d,
        [
          {
            events: [
              { type: 'links', links: links(rankBytes) },
              {
                type: 'round',
                report: {
                  round,
                  accepted: [0, 1, 2, 3, 4, 5, 6, 7],
                  verdict: 'ok',
                  durationMs: 10,
                  uplinkBytesPerHost: [perRank + 25, perRank + 25],
                },
              },
            ],
          },
        ],
        ring,
        round * 100 + 100,
      ).data;
    }
    // The first report has no baseline, the next five each give one point.
    expect(d.savings.length).toBe(5);
    expect(d.savings[0].direct).toEqual([4 * perRank, 4 * perRank]);
    const s = recentSavings(d.savings);
    expect(s[0]!.ratio).toBeCloseTo((perRank + 25) / (4 * perRank), 9);
    expect(d.snapshot?.roundsCompleted).toBe(6);
    expect(d.rounds.length).toBe(6);
  });

  it('after deaths K is the ranks the host folded; rounds a host missed are excluded and counted', () => {
    // Issue 10: with r2 and r5 dead, h0 still showed K = 4 and a ratio of 0.25; a dead host's row
    // averaged its live and dead rounds.
    const ring = new RecordRing(10);
    const perRank = 1000;
    let d = applyBatches(
      emptyLabData(),
      [{ events: [{ type: 'snapshot', snapshot: snapshot() }] }],
      ring,
      0,
    ).data;
    const sent: Record<number, number> = {};
    const round = (r: number, folded: number[][]) => {
      for (const ranks of folded) for (const x of ranks) sent[x] = (sent[x] ?? 0) + perRank;
      const rankBytes = (id: string) => {
        const m = /\.r(\d+)\./.exec(id);
        // Counters are summed over data + control: put a rank's bytes on its data link only.
        return m && id.endsWith('.data') ? (sent[Number(m[1])] ?? 0) : 0;
      };
      d = applyBatches(
        d,
        [
          {
            events: [
              { type: 'links', links: links(rankBytes) },
              {
                type: 'round',
                report: {
                  round: r,
                  accepted: folded.flat(),
                  verdict: 'ok',
                  durationMs: 10,
                  uplinkBytesPerHost: folded.map((ranks) => (ranks.length ? perRank + 25 : 0)),
                  foldedPerHost: folded,
                },
              },
            ],
          },
        ],
        ring,
        r * 100 + 100,
      ).data;
    };
    for (let r = 0; r < 4; r++)
      round(r, [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
      ]);
    // r2 and r5 die; then host h1 is lost altogether.
    for (let r = 4; r < 8; r++)
      round(r, [
        [0, 1, 3],
        [4, 6, 7],
      ]);
    for (let r = 8; r < 10; r++) round(r, [[0, 1, 3], []]);
    const [h0, h1] = recentSavings(d.savings);
    expect(h0!.k).toBe(3);
    expect(h0!.direct).toBe(3 * perRank);
    expect(h0!.ratio).toBeCloseTo((perRank + 25) / (3 * perRank), 9);
    expect(h0!.rounds).toBe(6);
    expect(h0!.otherK).toBe(3);
    expect(h1!.k).toBe(3);
    expect(h1!.ratio).toBeCloseTo((perRank + 25) / (3 * perRank), 9);
    expect(h1!.absent).toBe(2);
    expect(h1!.rounds).toBe(4);
    expect(d.savings.at(-1)!.k).toEqual([3, 0]);
  });

  it('a snapshot from a new session clears the ring and the history', () => {
    const ring = new RecordRing(10);
    const d = applyBatches(
      emptyLabData(),
      [
        {
          events: [
            { type: 'snapshot', snapshot: snapshot() },
            { type: 'records', records: [record(1)], droppedBefore: 0 },
          ],
        },
      ],
      ring,
      0,
    ).data;
    expect(ring.size).toBe(1);
    const r = applyBatches(
      d,
      [
        {
          events: [
            { type: 'snapshot', snapshot: snapshot({ startedAt: 99999 }) },
            { type: 'records', records: [record(0)], droppedBefore: 0 },
          ],
        },
      ],
      ring,
      10,
    );
    expect(r.reset).toBe(true);
    expect(ring.size).toBe(1);
    expect(ring.at(0)!.seq).toBe(0);
    expect(r.newRecords.map((x) => x.seq)).toEqual([0]);
  });

  it('keeps findings bounded', () => {
    const ring = new RecordRing(10);
    const events = Array.from({ length: MAX_FINDINGS_KEPT + 50 }, (_, id) => ({
      type: 'finding' as const,
      finding: { id, t: id, severity: 'warn' as const, kind: 'dead' as const, message: 'x' },
    }));
    const { data } = applyBatches(emptyLabData(), [{ events }], ring, 0);
    expect(data.findings.length).toBe(MAX_FINDINGS_KEPT);
    expect(data.findings[0].id).toBe(50);
  });

  it('a rank state change in a snapshot replaces the old state', () => {
    const ring = new RecordRing(10);
    let d = applyBatches(
      emptyLabData(),
      [{ events: [{ type: 'snapshot', snapshot: snapshot() }] }],
      ring,
      0,
    ).data;
    const killed = snapshot();
    killed.ranks[3] = { ...killed.ranks[3], state: 'dead' };
    d = applyBatches(d, [{ events: [{ type: 'snapshot', snapshot: killed }] }], ring, 5).data;
    expect(d.snapshot!.ranks[3].state).toBe('dead');
    expect(d.snapshot!.ranks[2].state).toBe('alive');
  });

  it('places each finding on the round the cluster was on, for bands on the charts', () => {
    const ring = new RecordRing(10);
    const { data } = applyBatches(
      emptyLabData(),
      [
        { events: [{ type: 'snapshot', snapshot: snapshot({ round: 7 }) }] },
        {
          events: [
            {
              type: 'finding',
              finding: {
                id: 1,
                t: 5,
                severity: 'warn',
                kind: 'fault',
                message: 'kill rank 5 (SIGKILL)',
                ranks: [5],
              },
            },
          ],
        },
      ],
      ring,
      0,
    );
    expect(data.marks).toEqual([
      { round: 7, kind: 'fault', severity: 'warn', message: 'kill rank 5 (SIGKILL)' },
    ]);
  });
});
