import { describe, it, expect } from 'vitest';
import type { UnitRecord } from './records';
import { RoundByteLedger, type LedgerLink } from './round-bytes';
import { dataUpBytes, LEN_PREFIX_BYTES, roundFrameBytes } from '../sweep/theory';

const LINKS: Record<string, LedgerLink> = {
  'h0.uplink.data': { kind: 'uplink', channel: 'data', host: 0 },
  'h0.uplink.control': { kind: 'uplink', channel: 'control', host: 0 },
  'h0.r0.data': { kind: 'loopback', channel: 'data', host: 0, rank: 0 },
  'h0.r1.data': { kind: 'loopback', channel: 'data', host: 0, rank: 1 },
  'h0.r0.control': { kind: 'loopback', channel: 'control', host: 0, rank: 0 },
  'r2.uplink.data': { kind: 'uplink', channel: 'data', host: 1, rank: 2 },
};

let seq = 0;
function unit(
  link: string,
  kind: string,
  length: number,
  round?: number,
  dir: 'up' | 'down' = 'up',
): UnitRecord {
  const r: UnitRecord = {
    seq: seq++,
    t: seq,
    link,
    dir,
    layer: 'mux',
    kind,
    length,
    captured: 0,
    verdict: 'ok',
    summary: '',
  };
  if (round !== undefined) r.round = round;
  return r;
}

describe('RoundByteLedger', () => {
  it('puts each data unit in the one round it carries, setup apart, control and down not at all', () => {
    const l = new RoundByteLedger();
    const feed = (u: UnitRecord) => l.unit(u, LINKS[u.link]);
    const F = roundFrameBytes(10 * 1024, 'f32');
    feed(unit('h0.uplink.data', 'DATA magic', 4));
    feed(unit('h0.uplink.data', 'Hello', 40));
    feed(unit('h0.r0.data', 'dataHandshake', 16));
    for (let r = 0; r < 3; r++) {
      feed(unit('h0.r0.data', 'RoundFrame', 4 + F, r));
      feed(unit('h0.r1.data', 'RoundFrame', 4 + F, r));
      // Heartbeats and the consensus down are not a round's uplink bytes.
      feed(unit('h0.uplink.control', 'ControlFrame', 60));
      feed(unit('h0.r0.control', 'ControlFrame', 30));
      feed(unit('h0.uplink.data', 'HostFrame', 25 + F, r));
      feed(unit('h0.uplink.data', 'Broadcast', 25 + F, r, 'down'));
    }
    // A rank died in round 2: its relay's RankExit is round 2's bytes too.
    feed(unit('h0.uplink.data', 'RankExit', 27, 2));
    expect(l.setupUp.get(0)).toBe(44);
    for (let r = 0; r < 3; r++) {
      const b = l.take(r, 1);
      expect(b.hostUp).toEqual([dataUpBytes('fold', 2, F) + (r === 2 ? 27 : 0)]);
      expect([...b.rankUp]).toEqual([
        [0, LEN_PREFIX_BYTES + F],
        [1, LEN_PREFIX_BYTES + F],
      ]);
    }
  });

  it("direct mode: a rank's own uplink is both the host's bytes and that rank's", () => {
    const l = new RoundByteLedger();
    l.unit(unit('r2.uplink.data', 'dataHandshake', 16), LINKS['r2.uplink.data']);
    l.unit(unit('r2.uplink.data', 'RoundFrame', 1004, 0), LINKS['r2.uplink.data']);
    const b = l.take(0, 2);
    expect(b.hostUp).toEqual([0, 1004]);
    expect(b.rankUp.get(2)).toBe(1004);
    expect(l.setupUp.get(1)).toBe(16);
  });

  it('forgets a taken round and everything before it; a late unit of one is counted apart, not in a later round', () => {
    const l = new RoundByteLedger();
    const up = LINKS['h0.uplink.data'];
    l.unit(unit('h0.uplink.data', 'HostFrame', 100, 0), up);
    l.unit(unit('h0.uplink.data', 'HostFrame', 100, 1), up);
    expect(l.take(1, 1).hostUp).toEqual([100]);
    expect(l.peek(0, 1).hostUp).toEqual([0]);
    l.unit(unit('h0.uplink.data', 'HostFrame', 7, 0), up);
    l.unit(unit('h0.r1.data', 'RoundFrame', 9, 1), LINKS['h0.r1.data']);
    expect(l.lateUp.get(0)).toBe(7);
    expect(l.peek(2, 1)).toEqual({ hostUp: [0], rankUp: new Map() });
  });

  it('every unit belongs to exactly one round: the rounds and the setup add up to the counters', () => {
    // Random units on a host's data uplink: whatever their order and rounds, nothing is lost or doubled.
    let x = 12345;
    const rand = (n: number) => ((x = (x * 1103515245 + 12345) & 0x7fffffff), x % n);
    const l = new RoundByteLedger();
    const up = LINKS['h0.uplink.data'];
    let counter = 0;
    const perRound = new Map<number, number>();
    let setup = 0;
    for (let i = 0; i < 500; i++) {
      const length = 1 + rand(5000);
      const round = rand(4) === 0 ? undefined : rand(20);
      counter += length;
      if (round === undefined) setup += length;
      else perRound.set(round, (perRound.get(round) ?? 0) + length);
      l.unit(unit('h0.uplink.data', 'HostFrame', length, round), up);
    }
    let sum = 0;
    for (let r = 0; r < 20; r++) {
      const b = l.take(r, 1).hostUp[0];
      expect(b).toBe(perRound.get(r) ?? 0);
      sum += b;
    }
    expect(sum + (l.setupUp.get(0) ?? 0)).toBe(counter);
    expect(l.setupUp.get(0) ?? 0).toBe(setup);
  });
});
