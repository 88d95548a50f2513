// The fold's time benefit under a shaped host uplink (issue 15's done line):
// 1x4 at 256 KiB with each host uplink at 50 MB/s, fold's median round at
// least 2.5x faster than direct's (the uplink alone says 4x: one frame up and
// one down per host against four). Timed, so it lives in the slow suite
// (`npm run test:slow`), to run on a quiet machine.
//
// It runs `relay-lab sweep` as its own process, the command a user types: the
// engine inside a vitest worker (sources transformed on the fly, a worker
// thread sharing the test runner's process) measured 10 to 25% slower per
// round than the bundled command, which is not what anyone would run.
import { describe, expect, it } from 'vitest';
import type { SweepResult } from '@shared/sweep/types';
import { relayLab } from '../cli/testing/relay-lab-cli';

describe('shaped host uplinks', () => {
  it('1x4 fold beats direct by at least 2.5x at 50 MB/s per host uplink', async () => {
    const { code, out, err } = await relayLab([
      'sweep',
      '--topologies',
      '1x4',
      '--modes',
      'fold,direct',
      '--model-bytes',
      '256KiB',
      '--rounds',
      '5',
      '--uplink-bandwidth',
      '50000000',
      '--json',
    ]);
    expect(code, err).toBe(0);
    const [fold, direct] = (JSON.parse(out) as SweepResult).cases;
    // What was measured, so a failing run says by how much and where the fold's round went.
    console.log(
      `fold ${fold.roundMs.median.toFixed(1)} ms, direct ${direct.roundMs.median.toFixed(1)} ms: ` +
        `${(direct.roundMs.median / fold.roundMs.median).toFixed(2)}x; fold stages ${JSON.stringify(fold.stages?.medianMs)}`,
    );
    expect(fold.dataUp.measured).toEqual(fold.dataUp.theory);
    expect(direct.dataUp.measured).toEqual(direct.dataUp.theory);
    // The shaped uplink is a floor: no round beats the bytes at the rate.
    expect(fold.roundMs.median).toBeGreaterThanOrEqual(fold.theoryRoundMs!);
    expect(direct.roundMs.median).toBeGreaterThanOrEqual(direct.theoryRoundMs!);
    expect(direct.roundMs.median / fold.roundMs.median).toBeGreaterThanOrEqual(2.5);
  }, 300_000);
});
