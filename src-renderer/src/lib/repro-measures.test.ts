// The measures table's formatting: numbers read as their field (grouped
// digits, bytes, ms, hex past 2^31) and both runs side by side with meanings.
import { describe, expect, it } from 'vitest';
import { formatMeasure, measureRows, SCENARIO_NOTES } from './repro-measures';

describe('reproduction measures', () => {
  it('formats numbers for their field', () => {
    expect(formatMeasure('declaredBytes', 4294977795)).toBe('4\u2009294\u2009977\u2009795 B (0x100002903)');
    expect(formatMeasure('declaredBytes', 0xffffffff)).toBe('4\u2009294\u2009967\u2009295 B (0xFFFFFFFF)');
    expect(formatMeasure('recordsSent', 4)).toBe('4');
    expect(formatMeasure('stallMs', 120)).toBe('120 ms');
    expect(formatMeasure('medianRoundMs', 41.5)).toBe('41.5 ms');
    expect(formatMeasure('firstError', { code: 'BAD_MAGIC', atRecord: 1 })).toBe(
      'code BAD_MAGIC · atRecord 1',
    );
    expect(formatMeasure('x', null)).toBe('–');
    expect(formatMeasure('stillWaiting', true)).toBe('yes');
  });

  it('puts both runs side by side, marks the rows that differ, skips the per-round lists', () => {
    const rows = measureRows(
      { bytesDropped: 25, recordsDecoded: 1, rounds: [1, 2] },
      { bytesDropped: 0, recordsDecoded: 4, timeoutsIgnoredWhileCommitted: 3 },
    );
    expect(rows.map((r) => r.key)).toEqual([
      'bytesDropped',
      'recordsDecoded',
      'timeoutsIgnoredWhileCommitted',
    ]);
    expect(rows[0]).toMatchObject({ historical: '25 B', current: '0 B', differs: true });
    expect(rows[0]!.meaning).toMatch(/partial frame/);
    expect(rows[2]!.historical).toBe('–');
  });

  it('has the three lines for each of the 11 built-ins', () => {
    expect(Object.keys(SCENARIO_NOTES)).toHaveLength(11);
  });
});
