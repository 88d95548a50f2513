import { describe, expect, it } from 'vitest';
import {
  STALL_FACTOR,
  STALL_HISTORY,
  STALL_SPREAD_FACTOR,
  STALL_WARMUP_MS,
  stallThresholdMs,
} from './stall-threshold';

describe('stall threshold', () => {
  it('gives round 0 (no round time known yet) the warm-up allowance, not the floor', () => {
    expect(stallThresholdMs(1000, [])).toBe(STALL_WARMUP_MS);
    // A default start: round 0 took ~1.5 s while the processes warmed up (issue 10).
    expect(1500).toBeLessThan(stallThresholdMs(1000, [], 250));
    // ...and 5.03 s in a default start on the loaded machine.
    expect(5027).toBeLessThan(stallThresholdMs(1000, [], 250));
    // Named before the default 30 s staleness declares it dead.
    expect(STALL_WARMUP_MS).toBeLessThan(30_000);
  });

  it('is the floor plus the interval while rounds are quick', () => {
    expect(stallThresholdMs(1500, [80, 120, 95])).toBe(1500);
    expect(stallThresholdMs(1000, [80, 120, 95], 250)).toBe(1250);
  });

  it('follows rounds that simply take long, so a slow model is not stalled every round', () => {
    const rounds = [1450, 1600, 1520, 1480];
    const t = stallThresholdMs(1000, rounds);
    expect(t).toBeGreaterThanOrEqual(STALL_FACTOR * 1500);
    expect(rounds.every((d) => d < t)).toBe(true);
  });

  it('absorbs the spikes of a loaded machine: a 1.9 s round among ~500 ms rounds is not a stall', () => {
    // Round times measured on the loaded 2-core machine: `relay-lab run --rounds 40` (default
    // topology, 4 MiB, 8 ranks) next to a running lab and other test suites. No round of the run
    // may exceed the threshold computed from the rounds before it.
    const measured = [
      1247, 3123, 2520, 2883, 2376, 2270, 1683, 2083, 902, 1220, 1772, 1884, 1602, 1149, 2072, 2484, 2822,
      2124, 1873, 1786, 1753, 1832, 1865, 1003, 1183, 683, 701, 1104, 680, 1328, 1022, 864, 522, 435, 657,
      923, 1569, 1557, 1251, 1229,
    ];
    measured.forEach((d, i) => expect(d).toBeLessThan(stallThresholdMs(1000, measured.slice(0, i), 0)));
    // The window's own example: a 1.9 s round after ~500 ms rounds at the default 250 ms interval.
    const quick = [420, 510, 480, 950, 460, 530, 1200, 470, 500, 490, 880, 450, 520, 610, 470, 505];
    expect(stallThresholdMs(1000, quick, 250)).toBeGreaterThan(1900);
  });

  it('one or two stalled rounds do not raise the bar for the next stall', () => {
    const quick = new Array<number>(STALL_HISTORY - 2).fill(500);
    const t = stallThresholdMs(1000, [...quick, 30_000, 31_000]);
    expect(t).toBe(Math.max(1000, STALL_FACTOR * 500, STALL_SPREAD_FACTOR * 500));
    // A wedged rank is still named within one threshold: a few normal rounds, far below the 30 s staleness.
    expect(t).toBeLessThan(2500);
  });

  it('looks at the recent rounds only', () => {
    const old = new Array<number>(40).fill(5000);
    const recent = new Array<number>(STALL_HISTORY).fill(400);
    expect(stallThresholdMs(1000, [...old, ...recent])).toBe(STALL_FACTOR * 400);
  });
});
