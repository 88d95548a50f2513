import { describe, expect, it } from 'vitest';
import { applySweepBatch, DEFAULT_EXPLORE_FORM, formToSpec, useExplore } from './explore-store';
import type { SweepCase } from '@shared/sweep/types';

describe('Explore form and progress', () => {
  it('turns the form into a checked sweep spec (MB/s are 10^6 bytes per second)', () => {
    expect(formToSpec(DEFAULT_EXPLORE_FORM)).toEqual({
      topologies: [[4], [2, 2], [1, 1, 1, 1]],
      modes: ['fold', 'direct'],
      modelBytes: 256 * 1024,
      dtype: 'f32',
      rounds: 3,
      warmupRounds: 2,
      uplinkBandwidth: 50_000_000,
    });
    const unshaped = formToSpec({ ...DEFAULT_EXPLORE_FORM, bandwidthMBps: ' ', topologies: '4+2+1' });
    expect(unshaped.uplinkBandwidth).toBeUndefined();
    expect(unshaped.topologies).toEqual([[4, 2, 1]]);
  });

  it('names a bad choice', () => {
    expect(() => formToSpec({ ...DEFAULT_EXPLORE_FORM, topologies: '2y2' })).toThrow(/must look like 2x4/);
    expect(() =>
      formToSpec({ ...DEFAULT_EXPLORE_FORM, modes: { fold: false, forward: false, direct: false } }),
    ).toThrow(/at least one mode/);
    expect(() => formToSpec({ ...DEFAULT_EXPLORE_FORM, modelBytes: 'big' })).toThrow(/model size/);
    expect(() => formToSpec({ ...DEFAULT_EXPLORE_FORM, rounds: 'x' })).toThrow(/rounds/);
    expect(() => formToSpec({ ...DEFAULT_EXPLORE_FORM, warmupRounds: '-1' })).toThrow(/warmupRounds/);
  });

  it('keeps each finished case once, in the order they come', () => {
    const c = (index: number) => ({ index, topology: '1x1', mode: 'fold' }) as SweepCase;
    applySweepBatch({
      events: [
        { type: 'sweep', progress: { done: 1, total: 2, current: null, state: 'running', finished: c(0) } },
        { type: 'sweep', progress: { done: 1, total: 2, current: null, state: 'running', finished: c(0) } },
        { type: 'sweep', progress: { done: 2, total: 2, current: null, state: 'running', finished: c(1) } },
        { type: 'log', level: 'info', message: 'not a sweep event' },
      ],
    });
    expect(useExplore.getState().partial.map((x) => x.index)).toEqual([0, 1]);
    expect(useExplore.getState().progress?.done).toBe(2);
  });
});
