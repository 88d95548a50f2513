import { describe, it, expect } from 'vitest';
import { arrowWindow, buildLadder, ladderLanes } from './ladder';
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
