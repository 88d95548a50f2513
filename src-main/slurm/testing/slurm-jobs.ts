// `relay-lab slurm submit --wait --json` against a one-node Slurm cluster
// from Debian's slurm-wlm and munge, started for the test file that calls
// useOneNodeCluster() (tasks on the one node stand in for hosts). The CLI
// runs as a person runs it; every process of a job carries its SLURM_JOB_ID,
// so "nothing left" is checked by reading every live process's environment
// after the job ends.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { oneNodeClusterUnavailable, startOneNodeCluster, type OneNodeCluster } from '../one-node-cluster';

export const exec = promisify(execFile);
export const RELAY_LAB_BIN = path.resolve('bin/relay-lab.mjs');

/** Why a one-node cluster cannot start here (null when it can); under CI=true that fails the file. */
export const slurmUnavailable = oneNodeClusterUnavailable();
if (slurmUnavailable) {
  const message = `slurm: cannot start a one-node Slurm cluster here (${slurmUnavailable}); skipping the Slurm tests`;
  if (process.env.CI === 'true') throw new Error(`${message}: under CI=true this fails the run`);
  console.warn(`\n*** ${message} ***\n`);
}

/** The file's cluster and a scratch folder for jobs' --out (set by useOneNodeCluster's beforeAll). */
export const slurm = { cluster: null as OneNodeCluster | null, work: '' };

export function useOneNodeCluster(): void {
  beforeAll(async () => {
    if (slurmUnavailable) return;
    slurm.cluster = await startOneNodeCluster();
    slurm.work = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-slurm-jobs-'));
  }, 60_000);
  afterAll(async () => {
    await slurm.cluster?.stop();
    if (slurm.work) fs.rmSync(slurm.work, { recursive: true, force: true });
  });
}

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

export async function noneLeft(id: string): Promise<number[]> {
  // Slurm reaps a step's processes as it ends it; give the node a moment.
  for (let i = 0; i < 50; i++) {
    const left = processesOfJob(id);
    if (left.length === 0) return left;
    await new Promise((r) => setTimeout(r, 200));
  }
  return processesOfJob(id);
}

export interface SubmitResult {
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

export function submit(args: string[], onStderr?: (text: string) => void): Promise<SubmitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RELAY_LAB_BIN, 'slurm', 'submit', ...args, '--wait', '--json'], {
      env: slurm.cluster!.env,
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
