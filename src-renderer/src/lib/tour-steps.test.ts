// The tour's steps come from real records of one round and select them.
import { describe, expect, it } from 'vitest';
import { tourSteps } from './tour-steps';
import { record } from '../test-fixtures';

const F = 1000;
const recs = [
  ...[0, 1, 2, 3].map((rank, i) =>
    record(10 + i, {
      kind: 'RoundFrame',
      layer: 'lenframe',
      dir: 'up',
      host: 0,
      rank,
      round: 4,
      length: F + 4,
      captured: F + 4,
    }),
  ),
  record(20, {
    kind: 'HostFrame',
    layer: 'mux',
    dir: 'up',
    link: 'h0.uplink.data',
    round: 4,
    length: F + 25,
  }),
  record(21, {
    kind: 'Broadcast',
    layer: 'mux',
    dir: 'down',
    link: 'h0.uplink.data',
    round: 4,
    length: F + 25,
  }),
  record(22, {
    kind: 'RoundFrame',
    layer: 'lenframe',
    dir: 'down',
    host: 0,
    rank: 0,
    round: 4,
    length: F + 4,
  }),
  record(30, {
    kind: 'RankExit',
    layer: 'mux',
    dir: 'up',
    link: 'h0.uplink.control',
    summary: 'RankExit rank=3',
  }),
];

describe('tour steps', () => {
  it('walk one round in 6 to 10 steps, each on a real record', () => {
    const steps = tourSteps(recs);
    expect(steps.length).toBeGreaterThanOrEqual(6);
    expect(steps.length).toBeLessThanOrEqual(10);
    const seqs = new Set(recs.map((r) => r.seq));
    for (const s of steps) expect(seqs.has(s.seq), s.title).toBe(true);
    expect(steps.map((s) => s.seq)).toEqual([10, 20, 20, 21, 22, 20, 30]);
    expect(steps[1].title).toMatch(/folds 4 frames/);
    // The bytes the savings panel counts: each rank's frame with its 4-byte length prefix.
    expect(steps[5].text).toMatch(/4 × \(1000 B \+ its 4-byte length prefix\) = 4016 B/);
    expect(steps[5].text).toMatch(/1025 B: 0\.255 of the direct bytes/);
    expect(steps[2].field).toEqual([5]);
    // All of the unit is kept here: the MAC it ends with is in the bytes shown.
    expect(steps[0].text).toMatch(/ends with an 8-byte MAC/);
    expect(steps[0].text).not.toMatch(/not among the bytes kept/);
  });

  it('say where the MAC is when the kept bytes end before it (a large model)', () => {
    const big = recs.map((r) => (r.seq === 10 ? { ...r, length: 4 * 1024 * 1024 + 12, captured: 256 } : r));
    const steps = tourSteps(big);
    expect(steps[0].text).toMatch(/the window kept the first 256 bytes/);
    expect(steps[0].text).toMatch(/not among the bytes kept/);
  });

  it('say what happens to the round in progress when a rank leaves, not "from then the relay folds without it"', () => {
    const gone = tourSteps(recs).at(-1)!;
    expect(gone.text).not.toMatch(/From then/);
    // The round in progress ships without the rank: a frame it had finished stays, one it was sending is dropped.
    expect(gone.text).toMatch(/round in progress/);
    expect(gone.text).toMatch(/finished.*stays in the sum/);
    expect(gone.text).toMatch(/still sending is dropped/);
    expect(gone.text).toMatch(/elastic.*instead of waiting/);
  });

  it('wait for a round with a Broadcast', () => {
    expect(tourSteps(recs.filter((r) => r.kind !== 'Broadcast'))).toEqual([]);
  });
});
