// More random recorded sessions replayed (record-replay.test.ts runs two):
// kills, pauses held for or past the staleness, resumes, host kills and link
// faults, several in one round, some while a round is stalled.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { differences, recordAndReplay, steps } from './record-replay.fixture';

describe('record in the window, replay with relay-lab repro (slow)', () => {
  it('random schedules replay with the same digests, dead set and verdict', async () => {
    await fc.assert(
      fc.asyncProperty(steps, async (plan) => {
        const r = await recordAndReplay(plan);
        expect(differences(r), `${JSON.stringify(plan)}\n${r.text}`).toEqual([]);
      }),
      { numRuns: 15, endOnFailure: true },
    );
  });
});
