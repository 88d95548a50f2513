// The fold's time benefit under a shaped host uplink (issue 15's done line):
// 1x4 at 256 KiB with each host uplink at 50 MB/s, fold's median round at
// least 2.5x faster than direct's (the uplink alone says 4x: one frame up and
// one down per host against four). Timed, so it lives in the slow suite
// (`npm run test:slow`), to run on a quiet machine.
import { describe, expect, it } from 'vitest';
import { runSweep } from './runner';

describe('shaped host uplinks', () => {
  it('1x4 fold beats direct by at least 2.5x at 50 MB/s per host uplink', async () => {
    const r = await runSweep({
      topologies: [[4]],
      modes: ['fold', 'direct'],
      modelBytes: 256 * 1024,
      dtype: 'f32',
      rounds: 5,
      uplinkBandwidth: 50_000_000,
    });
    const [fold, direct] = r.cases;
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
