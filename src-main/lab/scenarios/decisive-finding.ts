// A reproduction's decisive unit as a finding of its own trace. The picture
// names the unit, but a trace opened in the window shows what its events say:
// without a finding there, the historical run of a socket-level incident read
// "0 findings" and "finding ▶" had nowhere to go. The finding points at the
// unit (recordSeq), at its time, in the run's own words. The unit is the
// picture's (repro/run-picture.ts): the one the run named, else the picture's
// rules (the first unit the codec rejected, ...), so both always agree.
import fs from 'node:fs';
import type { Finding } from '@shared/lab/records';
import { pictureOfEvents } from '../../repro/run-picture';
import { appendBeforeEnd } from '../trace/amend';
import { loadTraceFile } from '../trace/ndjson';
import type { DecisiveHint, Scenario } from './types';

export async function decisiveFinding(
  s: Scenario,
  side: 'historical' | 'current',
  file: string,
  hint: DecisiveHint | undefined,
): Promise<Finding | null> {
  if (!fs.existsSync(file)) return null;
  const { events } = await loadTraceFile(file);
  const decisive = pictureOfEvents(events, undefined, hint).decisive;
  if (!decisive) return null;
  const { t, seq, why } = decisive;
  let id = 0;
  for (const e of events) if (e.type === 'finding') id = Math.max(id, e.finding.id + 1);
  const finding: Finding = {
    id,
    t,
    // The historical run shows the incident; flodl 0.7's run shows the same place holding.
    severity: side === 'historical' ? 'error' : 'info',
    kind: s.findingKind,
    message:
      side === 'historical'
        ? `${s.incident}, historical behaviour (lab-only): ${why}`
        : `${s.incident}, flodl 0.7: ${why}`,
    recordSeq: seq,
  };
  await appendBeforeEnd(file, [{ type: 'finding', t, finding }]);
  return finding;
}
