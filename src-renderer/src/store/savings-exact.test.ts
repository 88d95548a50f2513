// Issue 30 #3: the savings panel's figures are each round's own bytes, as the
// report counted them unit by unit, never counter samples: with rounds 50 ms
// apart and counters sampled every 100 ms, a 10 KiB model on 4 hosts of
// K = 2, 2, 1, 1 read 0.33 for K = 2 and 0.65 for K = 1, forward 0.964, and
// direct never measured a round. Now panel = report = the sweep's theory.
import { describe, it, expect } from 'vitest';
import type { RoundReport } from '@shared/lab/records';
import type { UplinkMode } from '@shared/lab/topology';
import { dataUpBytes, LEN_PREFIX_BYTES, roundFrameBytes } from '@shared/sweep/theory';
import { applyBatches, emptyLabData, recentSavings } from './apply-batch';
import { RecordRing } from './record-ring';
import { links, snapshot } from '../test-fixtures';
import { theoryRatio } from '../lib/savings-theory';

const K = [2, 2, 1, 1];
const MODEL = 10 * 1024;
const F = roundFrameBytes(MODEL, 'f32');

function session(mode: UplinkMode) {
  let next = 0;
  const groups = K.map((k) => Array.from({ length: k }, () => next++));
  const snap = snapshot({
    hosts: groups.map((ranks, host) => ({ host, name: `h${host}`, ranks, state: 'up' })),
  });
  snap.config = { ...snap.config, ranksPerHost: K, modelBytes: MODEL, mode };
  return { snap, groups };
}

function report(mode: UplinkMode, round: number, groups: number[][]): RoundReport {
  return {
    round,
    accepted: groups.flat(),
    verdict: 'ok',
    durationMs: 5,
    // Counter deltas between a round's start and end: not what the panel reads.
    uplinkBytesPerHost: K.map(() => 123),
    foldedPerHost: groups,
    dataUpBytesPerHost: K.map((k) => dataUpBytes(mode, k, F)),
    rankDataUpBytes: groups.map((ranks) => ranks.map(() => LEN_PREFIX_BYTES + F)),
  };
}

describe('savings from the reports’ own bytes', () => {
  for (const mode of ['fold', 'forward', 'direct'] as UplinkMode[])
    it(`${mode}: every round is a point; ratio, one rank and K × one rank are the theory's`, () => {
      const { snap, groups } = session(mode);
      const ring = new RecordRing(10);
      let d = applyBatches(
        emptyLabData(),
        [{ events: [{ type: 'snapshot', snapshot: snap }] }],
        ring,
        0,
      ).data;
      for (let r = 0; r < 30; r++) {
        // Counter samples at their own pace (every other round, one round late): ignored.
        const events =
          r % 2 ? [{ type: 'links' as const, links: links((id) => (id.includes('.r') ? 7 * r : 0)) }] : [];
        d = applyBatches(
          d,
          [{ events: [...events, { type: 'round', report: report(mode, r, groups) }] }],
          ring,
          r * 50,
        ).data;
      }
      expect(d.savings.length).toBe(30);
      const recent = recentSavings(d.savings);
      K.forEach((k, h) => {
        const row = recent[h]!;
        expect(row.k).toBe(k);
        expect(row.exact).toBe(true);
        expect(row.uplink).toBe(dataUpBytes(mode, k, F));
        expect(row.perRank).toBe(LEN_PREFIX_BYTES + F);
        expect(row.direct).toBe(dataUpBytes('direct', k, F));
        expect(row.ratio).toBeCloseTo(theoryRatio(mode, k, F), 12);
        // Never below 1/K in fold; above 1 for K = 1 and for forward.
        if (mode === 'fold') expect(row.ratio).toBeGreaterThan(1 / k);
        if (mode === 'forward' || k === 1) expect(row.ratio).toBeGreaterThanOrEqual(1);
      });
      // The chart's lines: flat, no zigzag.
      for (const p of d.savings) expect(p.direct).toEqual(K.map((k) => k * (LEN_PREFIX_BYTES + F)));
    });

  it('a report without per-round bytes (an older trace, a capture) is marked estimated', () => {
    const { snap, groups } = session('fold');
    const ring = new RecordRing(10);
    let d = applyBatches(emptyLabData(), [{ events: [{ type: 'snapshot', snapshot: snap }] }], ring, 0).data;
    for (let r = 0; r < 3; r++) {
      const old = report('fold', r, groups);
      delete old.dataUpBytesPerHost;
      delete old.rankDataUpBytes;
      const sent = (id: string) => (/\.r\d+\.data$/.test(id) ? (r + 1) * (LEN_PREFIX_BYTES + F) : 0);
      d = applyBatches(
        d,
        [
          {
            events: [
              { type: 'links', links: links(sent) },
              { type: 'round', report: old },
            ],
          },
        ],
        ring,
        r,
      ).data;
    }
    expect(d.savings.length).toBe(2);
    expect(recentSavings(d.savings)[0]!.exact).toBe(false);
  });
});
