// The fold-benefit sentence (CLI sweep report and Explore) says which way it went.
import { describe, expect, it } from 'vitest';
import { foldBenefit, foldVerdict } from './summary';
import type { SweepCase, SweepResult } from './types';

const kase = (topology: string, ranksPerHost: number[], mode: 'fold' | 'direct', median: number) =>
  ({ topology, ranksPerHost, mode, roundsCompleted: 3, roundMs: { median, p90: median } }) as SweepCase;

describe('fold benefit sentence', () => {
  it('says faster, slower or about the same, never a bare ratio under 1', () => {
    expect(foldVerdict(10, 20)).toBe('fold 2.00x faster');
    expect(foldVerdict(20, 15.2)).toBe('fold 1.32x slower');
    expect(foldVerdict(100, 101)).toBe('about the same');
  });

  it('words each topology of a sweep plainly, either way', () => {
    const r = {
      spec: { uplinkBandwidth: 50e6 },
      cases: [
        kase('1x4', [4], 'fold', 10),
        kase('1x4', [4], 'direct', 25),
        kase('4x1', [1, 1, 1, 1], 'fold', 13.2),
        kase('4x1', [1, 1, 1, 1], 'direct', 10),
      ],
    } as unknown as SweepResult;
    const s = foldBenefit(r)!;
    expect(s).toBe(
      'With each host uplink shaped to 50 MB/s, median round time: ' +
        '1x4: fold 10.0 ms vs direct 25.0 ms, fold 2.50x faster (K=4); ' +
        '4x1: fold 13.2 ms vs direct 10.0 ms, fold 1.32x slower (K=1).',
    );
    expect(s).not.toMatch(/0\.\d+x/);
  });
});
