// A topology scenario names its own decisive unit: the one its narrative is
// about (the NaN consensus, the elided frame, the consensus of the slowest
// round), picked from the tap's records of the run. Without it the picture
// falls back to generic rules whose last resort, "the last unit of the run",
// lands on a teardown unit (a RankExit) that says nothing about the bug.
import type { UnitRecord } from '@shared/lab/records';
import type { ScenarioContext } from './types';

/** Names the first record matching `pick` (with `why` in the run's own words); nothing when none matches. */
export function nameDecisive(
  ctx: ScenarioContext,
  records: readonly UnitRecord[],
  pick: (r: UnitRecord) => boolean,
  why: (r: UnitRecord) => string,
): UnitRecord | undefined {
  const r = records.find(pick);
  if (r) ctx.decisive?.({ seq: r.seq, why: why(r) });
  return r;
}
