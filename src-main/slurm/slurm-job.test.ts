// `relay-lab slurm submit` against a real scheduler: a one-node Slurm cluster
// from Debian's slurm-wlm and munge, started for this file (tasks on the one
// node stand in for hosts). The CLI runs as a person runs it; every process
// of a job carries its SLURM_JOB_ID, so "nothing left" is checked by reading
// every live process's environment after the job ends.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTraceFile } from '../lab/trace/ndjson';
import { oneNodeClusterUnavailable, startOneNodeCluster, type OneNodeCluster } from './one-node-cluster';

const exec = promisify(execFile);
const BIN = path.resolve('bin/relay-lab.mjs');

const why = oneNodeClusterUnavailable();
if (why) {
  const message = `slurm: cannot start a one-node Slurm cluster here (${why}); skipping the Slurm tests`;
  if (process.env.CI === 'true') throw new Error(`${message}: under CI=true this fails the run`);
  console.warn(`\n*** ${message} ***\n`);
}

let cluster: OneNodeCluster;
let work: string;
beforeAll(async () => {
  if (why) return;
  cluster = await startOneNodeCluster();
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-slurm-jobs-'));
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** Pids of live processes (zombies aside) whose environment names this job. */
function processesOfJob(id: string): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (/^State:\s+Z/m.test(fs.readFileSync(`/proc/${d}/status`, 'utf8'))) continue;
      const env = fs.readFileSync(`/proc/${d}/environ`, 'utf8').split('\0');
      if (env.includes(`SLURM_JOB_ID=${id}`)) out.push(Number(d));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

async function noneLeft(id: string): Promise<number[]> {
  // Slurm reaps a step's processes as it ends it; give the node a moment.
  for (let i = 0; i < 50; i++) {
    const left = processesOfJob(id);
    if (left.length === 0) return left;
    await new Promise((r) => setTimeout(r, 200));
  }
  return processesOfJob(id);
}

interface SubmitResult {
  code: number | null;
  report: {
    verdict: string;
    roundsCompleted: number;
    roundsRequested: number;
    rounds: { verdict: string; accepted: number[] }[];
    dead: number[];
    ended: string;
    job: { id: string; state: string };
  };
  stderr: string;
}

function submit(args: string[], onStderr?: (text: string) => void): Promise<SubmitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'slurm', 'submit', ...args, '--wait', '--json'], {
      env: cluster.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      onStderr?.(stderr);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        resolve({ code, report: JSON.parse(stdout) as SubmitResult['report'], stderr });
      } catch {
        reject(new Error(`no JSON report (exit ${code}): ${stderr}`));
      }
    });
  });
}

describe.skipIf(why !== null)('relay-lab slurm submit on a one-node Slurm cluster', () => {
  it('a 2x2 topology: every round ok, the job COMPLETED, nothing left running', async () => {
    const out = path.join(work, 'clean');
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
      BIN,
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
    const out = path.join(work, 'kill');
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
    const out = path.join(work, 'cancel');
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
              setTimeout(() => void exec('scancel', [id], { env: cluster.env }), 1500);
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
