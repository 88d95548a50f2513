import { describe, it, expect } from 'vitest';
import { arrowWindow, buildLadder, ladderFocus, ladderLanes, laneWidth, roundOfSeq } from './ladder';
import { record, snapshot } from '../test-fixtures';

describe('ladder', () => {
  it('draws one round as arrows between rank, relay and controller lanes in record order', () => {
    const snap = snapshot();
    expect(ladderLanes(snap)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7', 'h0', 'h1', 'ctl']);
    const recs = [
      record(1, { round: 4, link: 'h0.r0.data', kind: 'RoundFrame' }),
      record(2, { round: 5, link: 'h0.r1.data', kind: 'RoundFrame' }),
      record(3, { round: 5, link: 'h0.uplink.data', kind: 'HostFrame' }),
      record(4, { round: 5, link: 'h0.uplink.data', kind: 'Broadcast', dir: 'down' }),
      record(5, { round: 5, link: 'h1.r6.data', kind: 'RoundFrame', dir: 'down', verdict: 'HMAC_MISMATCH' }),
      record(6, { round: undefined, link: 'nowhere', kind: 'x' }),
    ];
    const ladder = buildLadder(recs, snap, 1);
    expect(ladder.arrows.map((a) => [a.seq, a.from, a.to])).toEqual([
      [2, 1, 8],
      [3, 8, 10],
      [4, 10, 8],
      [5, 9, 6],
    ]);
    expect(ladder.arrows.find((a) => a.seq === 5)!.bad).toBe(true);
  });
});

describe('arrow window', () => {
  // 16 px rows below a 26 px head, as LadderView draws them.
  it('draws the arrows in view and the overscan, never past either end', () => {
    expect(arrowWindow(0, 256, 150, 26, 16, 8)).toEqual({ first: 0, end: 23 });
    // Scrolled to arrow 50's top: 50 - 8 .. the last row in view (65) + 8.
    expect(arrowWindow(26 + 50 * 16, 256, 150, 26, 16, 8)).toEqual({ first: 42, end: 74 });
    expect(arrowWindow(26 + 145 * 16, 256, 150, 26, 16, 8)).toEqual({ first: 137, end: 150 });
    expect(arrowWindow(0, 256, 0, 26, 16, 8)).toEqual({ first: 0, end: 0 });
  });
});

describe('the round the ladder shows', () => {
  const recs = [
    record(1, { round: 382, link: 'h0.r0.data', kind: 'RoundFrame' }),
    record(2, { round: 382, link: 'h0.uplink.data', kind: 'HostFrame' }),
    record(3, { round: 383, link: 'h0.r0.data', kind: 'RoundFrame' }),
    record(4, { round: undefined, link: 'h0.uplink.control', kind: 'Data' }),
    record(5, { round: 383, link: 'h0.uplink.data', kind: 'HostFrame' }),
    record(6, { round: 384, link: 'h0.r0.data', kind: 'RoundFrame' }),
    record(7, { round: 384, link: 'h0.r1.data', kind: 'RoundFrame' }),
  ];

  it('follows the selected unit (a finding, a tour step), then a stalled round, then the latest complete one', () => {
    // A unit without a round belongs to the round of the unit before it.
    expect(roundOfSeq(recs, 4)).toBe(383);
    expect(roundOfSeq(recs, 6)).toBe(384);
    expect(roundOfSeq(recs, 99)).toBeNull();
    expect(ladderFocus({ selectedRound: 382, stalledRound: 384, lastCompleted: 383 })).toEqual({
      round: 382,
      why: 'selected',
    });
    // During a stall the ladder is about the round that is stuck, in flight, not the one before it.
    expect(ladderFocus({ selectedRound: null, stalledRound: 384, lastCompleted: 383 })).toEqual({
      round: 384,
      why: 'stalled',
    });
    expect(ladderFocus({ selectedRound: null, stalledRound: null, lastCompleted: 383 })).toEqual({
      round: 383,
      why: 'latest',
    });
    expect(ladderFocus({ selectedRound: null, stalledRound: null, lastCompleted: -1 })).toBeNull();
    // A stall finding of round 316 selects its ranks' last unit, of round 315: the ladder shows 316.
    expect(
      ladderFocus({ selectedRound: 315, findingRound: 316, stalledRound: 316, lastCompleted: 315 }),
    ).toEqual({ round: 316, why: 'finding' });
  });

  it('draws the focused round, not the rounds after it', () => {
    const snap = snapshot();
    const at383 = buildLadder(recs, snap, 1, 400, 383);
    expect(at383.arrows.map((a) => a.seq)).toEqual([3, 4, 5]);
    // The stalled round in flight: its arrows so far.
    expect(buildLadder(recs, snap, 1, 400, 384).arrows.map((a) => a.seq)).toEqual([6, 7]);
    expect(buildLadder(recs, snap, 2, 400, 383).arrows.map((a) => a.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it('fits its lanes into the pane where they can stay readable, else keeps them readable and scrolls', () => {
    // 8 ranks, 2 relays and the controller in the ladder pane at 1440 wide (about 475 px).
    expect(11 * laneWidth(475, 11) + 20).toBeLessThanOrEqual(475);
    expect(laneWidth(2000, 11)).toBe(46);
    expect(laneWidth(200, 11)).toBe(34);
  });
});
