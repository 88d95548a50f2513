// A job that outruns its time limit (sbatch --time 1: one minute), on the
// one-node Slurm cluster: Slurm ends it, the report says it timed out (never
// a clean run, whatever rounds it finished), and nothing of it keeps running.
// In the slow suite: Slurm enforces limits on its own period, so the job
// takes one to two minutes.
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { noneLeft, slurm, slurmUnavailable, submit, useOneNodeCluster } from './testing/slurm-jobs';

useOneNodeCluster();

describe.skipIf(slurmUnavailable !== null)('a Slurm job past its time limit', () => {
  it('ends TIMEOUT, its report says so, nothing left running', async () => {
    const r = await submit([
      '--hosts',
      '2',
      '--ranks-per-host',
      '2',
      '--rounds',
      '100000',
      '--model-bytes',
      '16KiB',
      '--time',
      '1',
      '--out',
      path.join(slurm.work, 'timeout'),
    ]);
    expect(r.report.job.state, r.stderr).toBe('TIMEOUT');
    expect(r.report.ended).toMatch(/^job timeout/);
    expect(r.report.verdict).not.toBe('ok');
    expect(r.code).toBe(1);
    expect(await noneLeft(r.report.job.id)).toEqual([]);
  }, 300_000);
});
