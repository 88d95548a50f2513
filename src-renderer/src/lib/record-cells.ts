// A record's ten cells in the records list, as text: one place for what each
// column shows, read by the DOM rows (RecordsView) and by the picture drawn
// while the list follows a fast stream (row-paint.ts), so the two never differ.
import type { UnitRecord } from '@shared/lab/records';
import { formatInt, formatTime } from './format';

/** No., Time, Link, Dir, Layer, Kind, Rank, Length, Verdict, Info (a short capture's star is shown apart, in its own colour). */
export function rowCells(r: UnitRecord): string[] {
  return [
    String(r.seq),
    formatTime(r.t),
    r.link,
    r.dir === 'up' ? '↑' : '↓',
    r.layer,
    r.kind,
    String(r.rank ?? ''),
    formatInt(r.length),
    r.verdict,
    r.summary,
  ];
}
