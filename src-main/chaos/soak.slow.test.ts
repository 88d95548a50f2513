// The long chaos soak (issue 17 item 6): 40 randomized faulty runs of real
// processes (CHAOS_SOAK_RUNS, CHAOS_SOAK_SEED to change), each checked
// independently of the engine; every check must hold. A failure prints the
// replay line of each failing run.
import { describe, expect, it } from 'vitest';
import { formatSoak, soak } from './soak';

const RUNS = Number(process.env.CHAOS_SOAK_RUNS ?? 40);
const SEED = Number(process.env.CHAOS_SOAK_SEED ?? 17);

describe('chaos soak', () => {
  it(`${RUNS} randomized runs of seed ${SEED} hold every check`, { timeout: RUNS * 200_000 }, async () => {
    const report = await soak({
      runs: RUNS,
      seed: SEED,
      runTimeoutMs: 90_000,
      wallMs: 120_000,
      onCase: (c, r) =>
        process.stderr.write(
          `chaos ${c.index}: ${r.failures.map((f) => f.kind).join(',') || 'ok'} (${(r.ms / 1000).toFixed(1)} s)\n`,
        ),
    });
    process.stderr.write(formatSoak(report) + '\n');
    expect(report.runs).toBe(RUNS);
    expect(report.failing).toEqual([]);
  });
});
