import { describe, it, expect } from 'vitest';
import { bandsOf, MARK_COLOURS } from './chart-bands';

describe('chart bands', () => {
  it('draws one band per round, the most telling kind winning, and skips info-only kinds', () => {
    const bands = bandsOf([
      { round: 2, kind: 'exit', severity: 'warn', message: '' },
      { round: 2, kind: 'fault', severity: 'warn', message: '' },
      { round: 2, kind: 'dead', severity: 'warn', message: '' },
      { round: 5, kind: 'stalled', severity: 'warn', message: '' },
      { round: 6, kind: 'unknown-kind', severity: 'info', message: '' },
    ]);
    expect([...bands.keys()].sort()).toEqual([2, 5]);
    expect(bands.get(2)).toBe(MARK_COLOURS.fault);
    expect(bands.get(5)).toBe(MARK_COLOURS.stalled);
  });
});
