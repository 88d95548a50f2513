// What a trace seek and a (re)connect catch-up do to the window's data.
import { describe, it, expect } from 'vitest';
import type { LabView } from '@shared/lab/contract';
import { applyBatches, emptyLabData } from './apply-batch';
import { RecordRing } from './record-ring';
import { record, snapshot } from '../test-fixtures';

const traceView: LabView = {
  kind: 'trace',
  name: 'a.trace.ndjson',
  duration: 100,
  t: 40,
  complete: true,
  marks: [],
};

describe('trace views and catch-up', () => {
  it('a resetting snapshot clears the ring and the lists of the same session, and keeps the view', () => {
    const ring = new RecordRing(100);
    const live = applyBatches(
      emptyLabData(),
      [
        {
          events: [
            { type: 'snapshot', snapshot: snapshot() },
            { type: 'records', records: [record(1), record(2), record(3)], droppedBefore: 0 },
            { type: 'finding', finding: { id: 1, t: 1, severity: 'warn', kind: 'stalled', message: 'x' } },
          ],
        },
      ],
      ring,
      0,
    ).data;
    expect(ring.size).toBe(3);
    const seek = applyBatches(
      live,
      [
        {
          events: [
            { type: 'view', view: traceView },
            { type: 'snapshot', snapshot: snapshot(), reset: true },
            { type: 'records', records: [record(1)], droppedBefore: 0 },
          ],
        },
      ],
      ring,
      10,
    );
    expect(seek.reset).toBe(true);
    expect(seek.data.view).toEqual(traceView);
    expect(seek.data.findings).toEqual([]);
    expect(ring.size).toBe(1);
    expect(seek.newRecords.map((r) => r.seq)).toEqual([1]);
  });

  it('a snapshot of the same session without reset keeps what the window holds', () => {
    const ring = new RecordRing(100);
    const a = applyBatches(
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
    );
    const b = applyBatches(a.data, [{ events: [{ type: 'snapshot', snapshot: snapshot() }] }], ring, 1);
    expect(b.reset).toBe(false);
    expect(ring.size).toBe(1);
  });

  it('records the ring already holds (a catch-up overlapping live batches) are kept once', () => {
    const ring = new RecordRing(100);
    const caught = applyBatches(
      emptyLabData(),
      [
        {
          events: [
            { type: 'snapshot', snapshot: snapshot(), reset: true },
            { type: 'records', records: [record(5), record(6), record(7)], droppedBefore: 0 },
          ],
        },
      ],
      ring,
      0,
    );
    const next = applyBatches(
      caught.data,
      [{ events: [{ type: 'records', records: [record(6), record(7), record(8)], droppedBefore: 0 }] }],
      ring,
      1,
    );
    expect(next.newRecords.map((r) => r.seq)).toEqual([8]);
    const all: number[] = [];
    ring.forEach((r) => all.push(r.seq));
    expect(all).toEqual([5, 6, 7, 8]);
  });

  it("places a finding of a replayed batch at the round it happened in, not at the snapshot's end", () => {
    const ring = new RecordRing(100);
    const report = (round: number) => ({
      type: 'round' as const,
      report: { round, uplinkBytesPerHost: [0, 0] } as never,
    });
    const { data } = applyBatches(
      emptyLabData(),
      [
        {
          events: [
            { type: 'snapshot', snapshot: snapshot({ round: 26 }), reset: true },
            report(0),
            report(1),
            report(2),
            {
              type: 'finding',
              finding: { id: 1, t: 1, severity: 'error', kind: 'fault', message: 'kill rank 1' },
            },
            report(3),
          ],
        },
      ],
      ring,
      0,
    );
    expect(data.marks.map((m) => m.round)).toEqual([3]);
  });
});
