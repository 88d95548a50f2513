// More random recorded sessions replayed (record-replay.test.ts runs two):
// kills, pauses held for or past the staleness, resumes, host kills and link
// faults, several in one round, some while a round is stalled.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { differences, recordAndReplay, steps } from './record-replay.fixture';

describe('record in the window, replay with relay-lab repro (slow)', () => {
  it('random schedules replay with the same digests, dead set and verdict', async () => {
    // What the files held, to see the gates were exercised (printed, not judged: the plans are random).
    const seen = new Map<string, number>();
    const count = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1);
    await fc.assert(
      fc.asyncProperty(steps, async (plan) => {
        const r = await recordAndReplay(plan);
        expect(differences(r), `${JSON.stringify(plan)}\n${r.text}`).toEqual([]);
        for (const a of r.repro.schedule) {
          count(a.action);
          if (a.after) count(`after ${a.after}`);
          if (a.afterDead) count('afterDead');
          if (a.afterMs !== undefined) count('afterMs');
        }
        count(`dead ${r.repro.expectations.dead?.length ?? 0}`);
      }),
      { numRuns: 15, endOnFailure: true },
    );
    console.log(`record-replay: ${JSON.stringify(Object.fromEntries([...seen].sort()))}`);
  });
});
