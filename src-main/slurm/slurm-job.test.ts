// `relay-lab slurm submit` against a real scheduler: a one-node Slurm cluster
// started for this file (testing/slurm-jobs.ts), the CLI run as a person runs it.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTraceFile } from '../lab/trace/ndjson';
import {
  RELAY_LAB_BIN,
  exec,
  noneLeft,
  slurm,
  slurmUnavailable,
  submit,
  useOneNodeCluster,
} from './testing/slurm-jobs';

useOneNodeCluster();

describe.skipIf(slurmUnavailable !== null)('relay-lab slurm submit on a one-node Slurm cluster', () => {
  it('a 2x2 topology: every round ok, the job COMPLETED, nothing left running', async () => {
    const out = path.join(slurm.work, 'clean');
    const r = await submit([
      '--hosts',
      '2',
      '--ranks-per-host',
      '2',
      '--rounds',
      '4',
      '--model-bytes',
      '64KiB',
      '--out',
      out,
    ]);
    expect(r.report.job.state, r.stderr).toBe('COMPLETED');
    expect(r.report.verdict).toBe('ok');
    expect(r.code).toBe(0);
    expect(r.report.roundsCompleted).toBe(4);
    expect(r.report.rounds.map((x) => x.verdict)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(r.report.rounds.every((x) => x.accepted.length === 4)).toBe(true);
    expect(await noneLeft(r.report.job.id)).toEqual([]);
    // The salt stays in a file only the job's user can read.
    expect(fs.statSync(path.join(out, 'salt')).mode & 0o077).toBe(0);
    expect(fs.readFileSync(path.join(out, 'job.sh'), 'utf8')).not.toMatch(/[0-9a-f]{32}/);
    // The trace holds host h1's loopback legs (sent by its agent) as it holds h0's: same names, same units.
    const trace = await loadTraceFile(path.join(out, 'trace.ndjson'));
    const records = trace.events.flatMap((e) => (e.type === 'record' ? [e.record] : []));
    const legUnits = (link: string) =>
      records.filter((x) => x.link === link).map((x) => `${x.dir} ${x.kind} ${x.length} ${x.verdict}`);
    for (const [remote, local] of [
      ['h1.r2.data', 'h0.r0.data'],
      ['h1.r3.data', 'h0.r1.data'],
    ]) {
      expect(legUnits(remote).filter((u) => u.includes('RoundFrame'))).toHaveLength(8);
      expect(legUnits(remote)).toEqual(legUnits(local));
    }
    expect(records.filter((x) => x.link.startsWith('h1.r')).every((x) => x.verdict === 'ok')).toBe(true);
    expect(records.filter((x) => /^h1\.r[23]\.control$/.test(x.link)).length).toBeGreaterThan(0);
    // ...and `relay-lab trace info` lists them.
    const { stdout } = await exec(process.execPath, [
      RELAY_LAB_BIN,
      'trace',
      'info',
      path.join(out, 'trace.ndjson'),
      '--json',
    ]);
    const info = JSON.parse(stdout) as { unitsPerLink: Record<string, number>; gaps: number };
    for (const id of ['h1.r2.data', 'h1.r2.control', 'h1.r3.data', 'h1.r3.control'])
      expect(info.unitsPerLink[id], id).toBeGreaterThan(0);
    expect(info.gaps).toBe(0);
  }, 120_000);

  it('a rank killed on the remote host: declared dead, the rounds after it verify without it', async () => {
    const out = path.join(slurm.work, 'kill');
    const r = await submit([
      '--hosts',
      '2',
      '--ranks-per-host',
      '2',
      '--rounds',
      '5',
      '--model-bytes',
      '64KiB',
      '--kill-rank',
      '3@2',
      '--out',
      out,
    ]);
    expect(r.report.job.state, r.stderr).toBe('COMPLETED');
    expect(r.report.verdict).toBe('ok');
    expect(r.report.dead).toEqual([3]);
    expect(r.report.rounds.every((x) => x.verdict === 'ok')).toBe(true);
    expect(r.report.rounds[4].accepted).toEqual([0, 1, 2]);
    expect(await noneLeft(r.report.job.id)).toEqual([]);
  }, 120_000);

  it('scancel of a running job: nothing left running, and its report says cancelled', async () => {
    const out = path.join(slurm.work, 'cancel');
    let cancelled = false;
    const r = await submit(
      ['--hosts', '2', '--ranks-per-host', '2', '--rounds', '100000', '--model-bytes', '16KiB', '--out', out],
      (text) => {
        const id = /job (\d+) RUNNING/.exec(text)?.[1];
        if (id && !cancelled) {
          cancelled = true;
          // Cancel once rounds are under way (the engine has published itself and the agent joined).
          const poll = setInterval(() => {
            const log = fs.readdirSync(out).find((f) => f.startsWith('slurm-'));
            if (log && /joined/.test(fs.readFileSync(path.join(out, log), 'utf8'))) {
              clearInterval(poll);
              setTimeout(() => void exec('scancel', [id], { env: slurm.cluster!.env }), 1500);
            }
          }, 200);
        }
      },
    );
    expect(r.report.job.state).toBe('CANCELLED');
    expect(r.report.verdict).not.toBe('ok');
    expect(r.report.ended).toMatch(/^job cancelled/);
    expect(r.code).toBe(1);
    expect(await noneLeft(r.report.job.id)).toEqual([]);
  }, 120_000);
});
