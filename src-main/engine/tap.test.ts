// The tap: exact counters, the snap length, and bytes served back by seq.
import { describe, expect, it } from 'vitest';
import { PendingBytes, Tap } from './tap';

const link = {
  id: 'h0.uplink.data',
  from: 'relay h0',
  to: 'controller',
  channel: 'data' as const,
  kind: 'uplink' as const,
  host: 0,
};

describe('tap', () => {
  it('keeps at most snapLen bytes of a unit but always records its full length', () => {
    const tap = new Tap({ snapLen: 16 });
    const l = tap.link(link);
    const a = new Uint8Array(10).fill(1);
    const b = new Uint8Array(30).fill(2);
    const seq = tap.unit({
      link: l,
      dir: 'up',
      layer: 'mux',
      kind: 'HostFrame',
      length: 40,
      summary: 'x',
      bytes: [a, b],
    });
    const got = tap.bytesOf(seq)!;
    expect(got.record.length).toBe(40);
    expect(got.record.captured).toBe(16);
    expect(Array.from(got.bytes)).toEqual([...a, ...new Array(6).fill(2)]);
    expect(l.units).toBe(1);
  });

  it('counts bytes seen before a connection is named onto its link', () => {
    const tap = new Tap();
    const pending = new PendingBytes();
    pending.add('up', 4);
    pending.add('down', 7);
    const l = tap.link(link);
    pending.bind(l);
    pending.add('up', 100);
    expect(l.view()).toMatchObject({ bytesUp: 104, bytesDown: 7 });
  });

  it('forgets old captures beyond its budget but keeps counting', () => {
    const tap = new Tap({ snapLen: 1024, captureBudget: 2048 });
    const l = tap.link(link);
    const seqs = [0, 1, 2, 3].map(() =>
      tap.unit({
        link: l,
        dir: 'down',
        layer: 'mux',
        kind: 'Broadcast',
        length: 1024,
        summary: '',
        bytes: [new Uint8Array(1024)],
      }),
    );
    expect(tap.bytesOf(seqs[0])!.bytes.length).toBe(0);
    expect(tap.bytesOf(seqs[3])!.bytes.length).toBe(1024);
    expect(l.units).toBe(4);
  });

  it('keeps the bytes of the newest maxRecords units across many evictions (the queue compacts)', () => {
    const tap = new Tap({ snapLen: 8, maxRecords: 100 });
    const l = tap.link(link);
    const unit = (i: number) =>
      tap.unit({
        link: l,
        dir: 'up',
        layer: 'mux',
        kind: 'Data',
        length: 4,
        summary: '',
        bytes: [new Uint8Array([i & 255, (i >> 8) & 255, 0, 0])],
      });
    for (let i = 0; i < 10_000; i++) unit(i);
    expect(tap.bytesOf(9_899)!.bytes.length).toBe(0);
    expect([...tap.bytesOf(9_900)!.bytes]).toEqual([9_900 & 255, 9_900 >> 8, 0, 0]);
    expect([...tap.bytesOf(9_999)!.bytes]).toEqual([9_999 & 255, 9_999 >> 8, 0, 0]);
  });
});
