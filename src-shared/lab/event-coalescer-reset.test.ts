// A resetting snapshot (a trace seek, back to live) supersedes whatever the
// coalescer still holds, and the newest view wins.
import { describe, it, expect } from 'vitest';
import type { SessionSnapshot } from '@shared/lab/state';
import { EventCoalescer, MAX_PENDING_EVENTS } from './event-coalescer';

const snap = { running: false } as SessionSnapshot;

describe('EventCoalescer with trace seeks', () => {
  it('drops pending events before a resetting snapshot and keeps the events after it in order', () => {
    const c = new EventCoalescer();
    c.add({
      events: [
        { type: 'records', records: [], droppedBefore: 5 },
        { type: 'log', level: 'info', message: 'old' },
      ],
    });
    c.add({ events: [{ type: 'view', view: { kind: 'live' } }] });
    c.add({
      events: [
        {
          type: 'view',
          view: { kind: 'trace', name: 'a.trace.ndjson', duration: 9, t: 3, complete: true, marks: [] },
        },
        { type: 'snapshot', snapshot: snap, reset: true },
        { type: 'log', level: 'info', message: 'new' },
      ],
    });
    const out = c.take().events;
    expect(out.map((e) => e.type)).toEqual(['view', 'snapshot', 'log']);
    expect(out[0]).toMatchObject({ view: { kind: 'trace' } });
    expect(out[2]).toMatchObject({ message: 'new' });
  });

  it('keeps the link counters each round report was made against', () => {
    const c = new EventCoalescer();
    const links = (n: number) => ({
      type: 'links' as const,
      links: [
        {
          id: 'l',
          from: 'a',
          to: 'b',
          channel: 'data' as const,
          kind: 'uplink' as const,
          host: 0,
          bytesUp: n,
          bytesDown: 0,
          units: n,
        },
      ],
    });
    const round = (r: number) => ({ type: 'round' as const, report: { round: r } as never });
    c.add({ events: [links(1), links(2), round(0), links(3), round(1), links(4), links(5)] });
    const out = c
      .take()
      .events.map((e) =>
        e.type === 'links' ? `L${e.links[0]!.bytesUp}` : e.type === 'round' ? `R${e.report.round}` : e.type,
      );
    expect(out).toEqual(['L2', 'R0', 'L3', 'R1', 'L5']);
  });
});

describe('EventCoalescer while a client does not read', () => {
  it('keeps at most MAX_PENDING_EVENTS, drops the oldest rounds and logs, and says how many', () => {
    const c = new EventCoalescer();
    c.add({ events: [{ type: 'snapshot', snapshot: snap }] });
    const total = MAX_PENDING_EVENTS * 3;
    for (let i = 0; i < total; i++) c.add({ events: [{ type: 'log', level: 'info', message: `m${i}` }] });
    const out = c.take().events;
    expect(out.length).toBeLessThanOrEqual(MAX_PENDING_EVENTS + 1);
    expect(out[0]).toMatchObject({ type: 'log', level: 'warn' });
    const dropped = Number(/^(\d+) older events/.exec((out[0] as { message: string }).message)?.[1]);
    const logs = out.filter((e) => e.type === 'log' && e.level === 'info');
    // Nothing is lost without being counted, the newest survive, and the snapshot stays.
    expect(dropped + logs.length).toBe(total);
    expect(logs.at(-1)).toMatchObject({ message: `m${total - 1}` });
    expect(out.some((e) => e.type === 'snapshot')).toBe(true);
    expect(c.take().events).toEqual([]);
  });
});
