// Seeded fuzz: however the transport splits the event stream into frames,
// the state after applying it is the same as applying it all at once.
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import type { LabBatch, LabEvent } from '@shared/lab/contract';
import { applyBatches, emptyLabData } from './apply-batch';
import { RecordRing } from './record-ring';
import { record, snapshot, links } from '../test-fixtures';

function stream(rounds: number, perRound: number[]): LabEvent[] {
  const events: LabEvent[] = [{ type: 'snapshot', snapshot: snapshot() }];
  let seq = 0;
  for (let round = 0; round < rounds; round++) {
    const n = perRound[round % perRound.length];
    events.push({
      type: 'records',
      records: Array.from({ length: n }, () => record(seq++, { round })),
      droppedBefore: round % 3,
    });
    events.push({
      type: 'links',
      links: links((id) => (id.includes('.r') ? 1000 * (round + 1) : 250 * (round + 1))),
    });
    events.push({
      type: 'round',
      report: {
        round,
        accepted: [0, 1, 2, 3, 4, 5, 6, 7],
        verdict: 'ok',
        durationMs: 5,
        uplinkBytesPerHost: [250, 250],
      },
    });
    if (round % 4 === 1)
      events.push({
        type: 'finding',
        finding: { id: round, t: round, severity: 'warn', kind: 'stalled', message: `r${round}` },
      });
  }
  return events;
}

describe('applyBatches is independent of how events are framed', () => {
  it('matches a single application of the whole stream (seeded)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 25 }),
        fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 5 }),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 5, max: 60 }),
        (rounds, perRound, cuts, capacity) => {
          const events = stream(rounds, perRound);
          const whole = new RecordRing(capacity);
          const once = applyBatches(emptyLabData(), [{ events }], whole, 1000).data;

          const framed = new RecordRing(capacity);
          let data = emptyLabData();
          let at = 0;
          let i = 0;
          while (at < events.length) {
            const n = cuts[i++ % cuts.length];
            const frame: LabBatch[] = [{ events: events.slice(at, at + n) }];
            data = applyBatches(data, frame, framed, 1000).data;
            at += n;
          }
          const seqs = (r: RecordRing) => Array.from({ length: r.size }, (_, k) => r.at(k)!.seq);
          expect(seqs(framed)).toEqual(seqs(whole));
          expect(framed.total + framed.droppedUpstream).toBe(whole.total + whole.droppedUpstream);
          expect(data.rounds).toEqual(once.rounds);
          expect(data.savings).toEqual(once.savings);
          expect(data.findings).toEqual(once.findings);
          expect(data.snapshot).toEqual(once.snapshot);
        },
      ),
      { seed: 20261129, numRuns: 200 },
    );
  });
});
