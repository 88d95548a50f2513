// The engine's side of a remote host's legs, fed messages as an agent sends
// them: units land in the job's tap under the host's leg names, a relay
// event's record maps to the job tap's, and what an agent may not say (a leg
// of another host, an uplink, a unit that does not read right) is dropped and
// counted, never recorded.
import { describe, expect, it } from 'vitest';
import type { UnitRecord } from '@shared/lab/records';
import { Tap } from '../engine/tap';
import type { LegUnit } from './agent-protocol';
import { LegRecorder } from './leg-recorder';

function unit(link: string, seq: number, extra: Partial<UnitRecord> = {}): LegUnit {
  const bytes = Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]);
  return {
    r: {
      seq,
      t: 5,
      link,
      dir: 'up',
      layer: 'lenframe',
      kind: 'RoundFrame',
      rank: Number(/\.r(\d+)\./.exec(link)?.[1] ?? 0),
      round: 0,
      length: bytes.length,
      captured: bytes.length,
      verdict: 'ok',
      summary: 'RoundFrame from rank 2 (4 B)',
      ...extra,
    },
    b: bytes.toString('base64'),
  };
}

function recorder() {
  const tap = new Tap({ snapLen: 1024 });
  const logs: string[] = [];
  const legs = new LegRecorder(1, [2, 3], tap, (_l, m) => logs.push(m));
  const records: UnitRecord[] = [];
  tap.onRecord((r) => records.push(r));
  return { tap, legs, logs, records };
}

describe('LegRecorder', () => {
  it("records a host's leg units under its leg names, maps their seqs and acknowledges their bytes", () => {
    const { tap, legs, records } = recorder();
    tap.unit({
      link: tap.link({
        id: 'h0.uplink.data',
        from: 'h0',
        to: 'controller',
        channel: 'data',
        kind: 'uplink',
        host: 0,
      }),
      dir: 'up',
      layer: 'mux',
      kind: 'Hello',
      length: 1,
      summary: 'x',
    });
    legs.handle({
      type: 'legLink',
      id: 'h1.r2.data',
      endpoints: { address: '127.0.0.1', clientPort: 40001, serverPort: 40002 },
    });
    const ack = legs.handle({
      type: 'legUnits',
      now: 10,
      size: 700,
      units: [unit('h1.r2.data', 17), unit('h1.r3.control', 18, { kind: 'ControlFrame' })],
    });
    expect(ack).toBe(700);
    expect(records.slice(1).map((r) => [r.link, r.kind, r.host, r.rank, r.verdict])).toEqual([
      ['h1.r2.data', 'RoundFrame', 1, 2, 'ok'],
      ['h1.r3.control', 'ControlFrame', 1, 3, 'ok'],
    ]);
    expect(tap.bytesOf(records[1].seq)!.bytes).toEqual(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]));
    expect(tap.getLink('h1.r2.data')!.view()).toMatchObject({
      from: 'rank 2',
      to: 'relay h1',
      kind: 'loopback',
      endpoints: { clientPort: 40001 },
    });
    // A relay event naming the agent tap's unit 17 points at the job tap's record of it.
    expect(legs.seqOf(17)).toBe(records[1].seq);
    expect(legs.seqOf(99)).toBeUndefined();
    legs.handle({ type: 'legBytes', links: [['h1.r2.data', 120, 80]] });
    expect(tap.getLink('h1.r2.data')!.view()).toMatchObject({ bytesUp: 120, bytesDown: 80 });
  });

  it('drops and counts what an agent may not say, and names a gap as one, never as a failure', () => {
    const { legs, logs, records } = recorder();
    legs.handle({
      type: 'legUnits',
      now: 1,
      size: 1,
      units: [
        unit('h0.r0.data', 1), // another host's leg
        unit('h1.uplink.data', 2), // the uplink is the engine's own end
        unit('h1.r9.data', 3), // not one of the host's ranks
        unit('h1.r2.data', 4, { verdict: 'MADE_UP' as never }),
        unit('h1.r2.data', 5, { rank: 3 }),
        { r: null } as unknown as LegUnit,
      ],
    });
    expect(records).toEqual([]);
    expect(legs.totals).toMatchObject({ kept: 0, unreadable: 6 });
    expect(logs).toEqual([
      expect.stringMatching(
        /^h1: a loopback-leg unit from its agent was dropped \(not a leg of h1: h0\.r0\.data\)$/,
      ),
    ]);
    legs.handle({
      type: 'legGap',
      gap: { link: 'h1.r2.data', dir: 'down', t: 3, units: 3, bytes: 900, rejected: 0 },
    });
    expect(records).toMatchObject([
      {
        link: 'h1.r2.data',
        dir: 'down',
        kind: 'gap',
        verdict: 'ok',
        length: 900,
        captured: 0,
        rank: 2,
        summary: 'gap: 3 units (900 B) not kept: the agent link fell behind',
      },
    ]);
    expect(legs.totals).toMatchObject({ notKept: 3, notKeptBytes: 900 });
    expect(logs[1]).toBe('h1.r2.data down: 3 units (900 B) not kept: the agent link fell behind');
  });
});
