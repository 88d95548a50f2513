// Why a fold K times smaller on the uplink is not K times faster: the stages that do not shrink.
import { describe, expect, it } from 'vitest';
import { whyNotK } from './why-not-k';
import type { SweepCase, SweepResult } from './types';

const kase = (
  topology: string,
  ranksPerHost: number[],
  mode: 'fold' | 'direct',
  median: number,
  medianMs: Record<string, number>,
) =>
  ({
    topology,
    ranksPerHost,
    mode,
    roundsCompleted: 3,
    roundMs: { median, p90: median },
    stages: { medianMs, share: {}, sumOfMediansMs: 0 },
  }) as unknown as SweepCase;

const result = {
  spec: { uplinkBandwidth: 50e6 },
  cases: [
    kase('1x4', [4], 'fold', 10, {
      rankEncodeSend: 3,
      relayReceiveVerifyFold: 2.5,
      uplink: 1.5,
      controller: 1,
    }),
    kase('1x4', [4], 'direct', 20.5, { rankEncodeSend: 3, controller: 17.5 }),
    kase('2x1', [1, 1], 'fold', 10, { uplink: 5 }),
    kase('2x1', [1, 1], 'direct', 10, { controller: 5 }),
  ],
} as unknown as SweepResult;

describe('why not K x faster (issue 30 #16)', () => {
  it('names each fold faster by less than K, with both cases\u2019 stages side by side', () => {
    const [w, ...rest] = whyNotK(result);
    expect(rest).toEqual([]);
    expect(w.topology).toBe('1x4');
    expect(w.k).toBe(4);
    expect(w.speedup).toBeCloseTo(2.05, 2);
    expect(w.text).toMatch(/2\.05x faster, not 4x/);
    // What the fold does not shorten: the ranks' own encode and send, and the relay's work it adds.
    expect(w.text).toMatch(/rankEncodeSend/);
    expect(w.text).toMatch(/relayReceiveVerifyFold/);
    expect(w.rows).toEqual([
      { stage: 'rankEncodeSend', foldMs: 3, directMs: 3 },
      { stage: 'relayReceiveVerifyFold', foldMs: 2.5, directMs: null },
      { stage: 'uplink', foldMs: 1.5, directMs: null },
      { stage: 'controller', foldMs: 1, directMs: 17.5 },
    ]);
  });

  it('says nothing of a sweep without stages or without a fold faster than direct', () => {
    const bare = {
      ...result,
      cases: result.cases.map((c) => ({ ...c, stages: undefined })),
    } as SweepResult;
    expect(whyNotK(bare)[0].rows).toEqual([]);
    const slower = { ...result, cases: result.cases.slice(2) } as SweepResult;
    expect(whyNotK(slower)).toEqual([]);
  });
});
