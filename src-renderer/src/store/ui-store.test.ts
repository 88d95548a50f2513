import { describe, it, expect } from 'vitest';
import { formToConfig, parsePerHost } from './ui-store';

describe('new topology form', () => {
  it('turns hosts x ranks, or an explicit per-host list, into a topology config', () => {
    const base = {
      hosts: 2,
      ranksPerHost: 4,
      modelMiB: 4,
      mode: 'fold' as const,
      policy: 'elastic' as const,
      dtype: 'f32' as const,
    };
    expect(formToConfig(base)).toEqual({
      ranksPerHost: [4, 4],
      modelBytes: 4 * 1024 * 1024,
      mode: 'fold',
      policy: 'elastic',
      dtype: 'f32',
      snapLen: 65_536,
    });
    expect(formToConfig({ ...base, snapLen: 1500 }).snapLen).toBe(1500);
    expect(formToConfig({ ...base, perHost: '4, 2 3' }).ranksPerHost).toEqual([4, 2, 3]);
    expect(formToConfig({ ...base, perHost: '4,x' }).ranksPerHost).toEqual([4, 4]);
    expect(formToConfig({ ...base, modelMiB: 0.001 }).modelBytes! % 4).toBe(0);
    expect(parsePerHost('')).toBeNull();
    expect(parsePerHost('0,2')).toBeNull();
    expect(parsePerHost('33')).toBeNull();
    expect(parsePerHost('1.5')).toBeNull();
  });
});
