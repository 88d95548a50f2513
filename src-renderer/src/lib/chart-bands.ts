// Findings as coloured bands on the round axis: faults, kills and pauses
// stand out, so an effect on the chart can be traced to its cause.
import type { RoundMark } from '../store/apply-batch';

/** Band colours by finding kind: faults and kills stand out from stalls. */
export const MARK_COLOURS: Record<string, string> = {
  fault: 'rgba(229, 72, 77, 0.2)',
  hmac: 'rgba(245, 165, 36, 0.24)',
  rejected: 'rgba(245, 165, 36, 0.2)',
  mismatch: 'rgba(245, 165, 36, 0.24)',
  dead: 'rgba(229, 72, 77, 0.12)',
  exit: 'rgba(229, 72, 77, 0.1)',
  stalled: 'rgba(182, 125, 242, 0.12)',
};
/** One band per round: the first kind in this order wins. */
const MARK_PRIORITY = Object.keys(MARK_COLOURS);

export function bandsOf(marks: readonly RoundMark[]): Map<number, string> {
  const best = new Map<number, number>();
  for (const m of marks) {
    const p = MARK_PRIORITY.indexOf(m.kind);
    if (p < 0) continue;
    const cur = best.get(m.round);
    if (cur === undefined || p < cur) best.set(m.round, p);
  }
  return new Map([...best].map(([round, p]) => [round, MARK_COLOURS[MARK_PRIORITY[p]]]));
}
