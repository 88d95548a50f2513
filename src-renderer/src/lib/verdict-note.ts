// What the inspector adds to a unit's verdict. The verdict is the engine's,
// about the wire: its reader had the whole unit. The window's dissector sees
// only the bytes the snap length kept, so when those end before the unit does
// its TRUNCATED is about the capture, not the wire, and is never shown as a
// verdict; any other disagreement is shown as the dissector's.
import type { UnitRecord } from '@shared/lab/records';
import { formatInt } from './format';

export function verdictNote(
  r: Pick<UnitRecord, 'verdict' | 'captured' | 'length'>,
  dissection: { verdict: string; message?: string },
): string | null {
  if (dissection.verdict === r.verdict) return null;
  if (r.captured < r.length && dissection.verdict === 'TRUNCATED') {
    const kept = `the snap length kept ${formatInt(r.captured)} of its ${formatInt(r.length)} B`;
    return r.verdict === 'ok'
      ? `verified whole by the engine as it crossed (its MAC included); ${kept}, so the window does not check the MAC again`
      : `the engine's verdict on the whole unit; ${kept}`;
  }
  return `dissector: ${dissection.verdict}${dissection.message ? ` (${dissection.message})` : ''}`;
}
