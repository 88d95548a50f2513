// What a trace seek and a (re)connect catch-up do to the window's data.
import { describe, it, expect } from 'vitest';
import type { LabEvent, LabView } from '@shared/lab/contract';
import { applyBatches, emptyLabData } from './apply-batch';
import { RecordRing } from './record-ring';
import { links, record, snapshot } from '../test-fixtures';

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

describe('a trace seek on the trace clock', () => {
  // Ranks 0..7 each send 1000 bytes a round; a folded host sends 1100. Counters every 50 ms, a round every 250 ms.
  const uploadsAt = (t: number) => Math.floor(t / 250) * 1000;
  const linksAt = (t: number) =>
    links((id) => (id.includes('uplink') ? (uploadsAt(t) / 1000) * 1100 : uploadsAt(t)));
  const seekBatch = (until: number) => {
    const events: LabEvent[] = [
      { type: 'view', view: { ...traceView, t: until, duration: until } },
      {
        type: 'snapshot',
        snapshot: snapshot({ running: false, links: linksAt(until) }),
        reset: true,
        t: until,
      },
    ];
    for (let t = 0; t <= until; t += 50) {
      events.push({ type: 'links', links: linksAt(t), t });
      if (t > 0 && t % 250 === 0)
        events.push({
          type: 'round',
          report: {
            round: t / 250 - 1,
            accepted: [],
            verdict: 'ok',
            durationMs: 10,
            uplinkBytesPerHost: [1100, 1100],
            foldedPerHost: [
              [0, 1, 2, 3],
              [4, 5, 6, 7],
            ],
          } as never,
        });
    }
    events.push({ type: 'links', links: linksAt(until), t: until });
    return { events };
  };

  it('shows the rates and savings of the trace at that point, whenever the window applies it', () => {
    const ring = new RecordRing(100);
    // The whole 5 s of trace arrives in one batch, at one instant of the window's clock.
    const { data } = applyBatches(emptyLabData(), [seekBatch(5000)], ring, 123_456);
    // 1000 bytes per rank every 250 ms is 4000 B/s on a rank's leg, 4400 B/s on a host's uplink.
    expect(data.linkRates['h0.r0.data'].up).toBeCloseTo(4000, -2);
    expect(data.linkRates['h1.uplink.data'].up).toBeCloseTo(4400, -2);
    // Every round after the first has its savings point, with K = 4 and one rank's 1000 bytes.
    expect(data.savings.length).toBeGreaterThanOrEqual(17);
    for (const p of data.savings) {
      expect(p.k).toEqual([4, 4]);
      expect(p.perRank).toEqual([1000, 1000]);
      expect(p.direct).toEqual([4000, 4000]);
    }
  });
});
