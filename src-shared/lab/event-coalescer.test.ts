import { describe, it, expect } from 'vitest';
import type { UnitRecord } from '@shared/lab/records';
import { EventCoalescer, MAX_PENDING_RECORDS } from './event-coalescer';

const rec = (seq: number): UnitRecord => ({
  seq,
  t: seq,
  link: 'h0.uplink.data',
  dir: 'up',
  layer: 'mux',
  kind: 'HostFrame',
  length: 10,
  captured: 10,
  verdict: 'ok',
  summary: '',
});

describe('EventCoalescer', () => {
  it('merges record events, keeps only the newest links event, and keeps order of the rest', () => {
    const c = new EventCoalescer();
    c.add({
      events: [
        { type: 'records', records: [rec(1), rec(2)], droppedBefore: 0 },
        { type: 'links', links: [] },
      ],
    });
    c.add({ events: [{ type: 'records', records: [rec(3)], droppedBefore: 2 }] });
    c.add({
      events: [
        { type: 'log', level: 'info', message: 'x' },
        { type: 'links', links: [{ id: 'a' } as never] },
      ],
    });
    const { events } = c.take();
    expect(events.map((e) => e.type)).toEqual(['records', 'log', 'links']);
    const r = events[0] as Extract<(typeof events)[0], { type: 'records' }>;
    expect(r.records.map((x) => x.seq)).toEqual([1, 2, 3]);
    expect(r.droppedBefore).toBe(2);
    expect(c.empty).toBe(true);
  });

  it('bounds pending records and counts the ones it drops', () => {
    const c = new EventCoalescer();
    const n = MAX_PENDING_RECORDS + 123;
    for (let i = 0; i < n; i++) c.add({ events: [{ type: 'records', records: [rec(i)], droppedBefore: 0 }] });
    const [ev] = c.take().events;
    if (ev.type !== 'records') throw new Error('expected records');
    expect(ev.records.length).toBe(MAX_PENDING_RECORDS);
    expect(ev.droppedBefore).toBe(123);
    expect(ev.records[0].seq).toBe(123);
  });
});
