import { describe, expect, it } from 'vitest';
import type { UnitRecord } from '@shared/lab/records';
import { record } from '../test-fixtures';
import { rowCells } from './record-cells';

// The shared fixture, with a model-sized length and a summary as the engine writes one.
const rec = (seq: number, over: Partial<UnitRecord> = {}): UnitRecord =>
  record(seq, {
    t: 1234.5,
    length: 262212,
    captured: 262212,
    summary: 'HostFrame r=3 1 tensor w=4',
    ...over,
  });

describe('rowCells', () => {
  it('reads time in seconds, an arrow for the direction, a grouped length, an empty rank for none', () => {
    expect(rowCells(rec(7, { rank: 3, captured: 100 }))).toEqual([
      '7',
      '1.234',
      'h0.uplink.data',
      '↑',
      'mux',
      'HostFrame',
      '3',
      '262,212',
      'ok',
      'HostFrame r=3 1 tensor w=4',
    ]);
    expect(rowCells(rec(8, { dir: 'down' }))[3]).toBe('↓');
    expect(rowCells(rec(8))[6]).toBe('');
  });
});
