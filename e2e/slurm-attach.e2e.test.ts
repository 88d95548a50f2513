// The window attached to a Slurm job on a real scheduler: a one-node Slurm
// cluster (Debian's slurm-wlm and munge), a 2x2 job submitted with
// `relay-lab slurm submit`, browser mode in Chromium attached to the job's
// watch server through "Attach to a cluster" (address and token from the
// job folder's watch.json). The window shows the job's rounds and units live,
// kills rank 3 (on the job's second task, a host agent) and the job's report
// has it dead; Save trace saves the job's trace so far (fetched from the job:
// a complete trace, the job's own bytes up to a record's end); once the job
// is cancelled the window says it ended.
import { spawn, execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserOrSkip, openBrowserModeSession, type BrowserModeSession, rankChip } from './support';
import {
  oneNodeClusterUnavailable,
  startOneNodeCluster,
  type OneNodeCluster,
} from '../src-main/slurm/one-node-cluster';
import { loadTraceFile } from '../src-main/lab/trace/ndjson';

const exec = promisify(execFile);
const WAIT = { timeout: 120_000 };
const exe = browserOrSkip('slurm attach e2e');
const why = oneNodeClusterUnavailable();
if (why) {
  const message = `slurm attach e2e: cannot start a one-node Slurm cluster (${why}); skipping`;
  if (process.env.CI === 'true') throw new Error(`${message}: under CI=true this fails the run`);
  console.warn(`\n*** ${message} ***\n`);
}

let cluster: OneNodeCluster;
let session: BrowserModeSession;
let work: string;
let job: { id: string; done: Promise<{ code: number | null; stdout: string; stderr: string }> } | null = null;

beforeAll(async () => {
  if (!exe || why) return;
  cluster = await startOneNodeCluster();
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-attach-'));
}, 60_000);
afterAll(async () => {
  if (job) await exec('scancel', [job.id], { env: cluster.env }).catch(() => {});
  await job?.done.catch(() => {});
  await session?.close();
  await cluster?.stop();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

async function until<T>(what: string, get: () => T | null | undefined, ms = 90_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v !== null && v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.skipIf(!exe || why !== null)('attaching the window to a Slurm job', () => {
  it('shows the job live, kills a rank on a remote host, and the job report has it dead', async () => {
    const out = path.join(work, 'job');
    const child = spawn(
      process.execPath,
      [
        path.resolve('bin/relay-lab.mjs'),
        'slurm',
        'submit',
        '--hosts',
        '2',
        '--ranks-per-host',
        '2',
        '--rounds',
        '100000',
        '--model-bytes',
        '16KiB',
        '--out',
        out,
        '--wait',
        '--json',
      ],
      { env: cluster.env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    let exited: number | null = null;
    const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      child.on('close', (code) => {
        exited = code ?? -1;
        resolve({ code, stdout, stderr });
      }),
    );
    // A submit that ends before its job runs (a refused flag) fails here with its words, not by timing out.
    const alive = () => {
      if (exited !== null) throw new Error(`slurm submit exited ${exited}: ${stderr}`);
    };
    const id = await until('the job id', () => (alive(), /job (\d+) submitted/.exec(stderr)?.[1]));
    job = { id, done };
    const watch = await until('watch.json', () => {
      alive();
      try {
        const w = JSON.parse(fs.readFileSync(path.join(out, 'watch.json'), 'utf8')) as {
          port: number;
          token: string;
          jobId: string;
        };
        return w.jobId === id ? w : null;
      } catch {
        return null;
      }
    });
    // The watch file is the job user's alone: it holds the token.
    expect(fs.statSync(path.join(out, 'watch.json')).mode & 0o077).toBe(0);

    const tracesDir = path.join(work, 'window-traces');
    session = await openBrowserModeSession(exe!, {
      viewport: { width: 1440, height: 900 },
      extraArgs: ['--idle'],
      tracesDir,
    });
    const { page } = session;
    await page.getByRole('button', { name: 'More ▾' }).click();
    await page.getByRole('button', { name: 'Attach to a cluster' }).click();
    const dialog = page.getByRole('dialog', { name: 'Attach to a cluster' });
    await dialog.getByLabel('Address').fill(`127.0.0.1:${watch.port}`);
    // A wrong token is refused in words, and nothing is attached.
    await dialog.getByLabel('Token').fill('x'.repeat(32));
    await dialog.getByRole('button', { name: 'Attach' }).click();
    await expect.poll(() => dialog.textContent(), WAIT).toMatch(/refused the token/);
    await dialog.getByLabel('Token').fill(watch.token);
    await dialog.getByRole('button', { name: 'Attach' }).click();
    const banner = page.getByRole('region', { name: 'Attached job' });
    await expect
      .poll(() => banner.textContent(), WAIT)
      .toMatch(/Attached to the job at 127\.0\.0\.1:\d+ · live/);

    // Rounds and units arrive live from the job.
    const rounds = async () =>
      Number(((await page.getByLabel('Rounds completed').textContent()) ?? '').replace(/\D/g, ''));
    await expect.poll(rounds, WAIT).toBeGreaterThan(3);
    const seen = await rounds();
    await expect.poll(rounds, WAIT).toBeGreaterThan(seen + 3);
    await expect
      .poll(
        () => page.getByRole('region', { name: 'Topology' }).locator('[aria-label^="rank "]').count(),
        WAIT,
      )
      .toBe(4);

    // Kill rank 3: it runs on the job's second task (host h1's agent).
    const rank3 = page.getByRole('button', { name: rankChip(3) });
    await rank3.click();
    await page.getByRole('button', { name: 'Kill rank' }).click();
    await expect.poll(() => rank3.getAttribute('data-state'), WAIT).toBe('dead');
    const afterKill = await rounds();
    await expect.poll(rounds, WAIT).toBeGreaterThan(afterKill + 2);

    // Save trace, as for the lab's own session: the job's trace so far lands in the traces folder.
    const saveButton = page.getByRole('button', { name: 'Save trace', exact: true });
    if (!(await saveButton.isVisible())) await page.getByRole('button', { name: 'More ▾' }).click();
    await saveButton.click();
    const notice = page.getByRole('status', { name: 'Saved trace' });
    await expect.poll(() => notice.textContent(), WAIT).toMatch(/Saved relay-lab-\d{8}-\d{6}\.trace\.ndjson/);
    const savedName = /(relay-lab-\S+\.trace\.ndjson)/.exec((await notice.textContent()) ?? '')![1]!;
    const saved = await loadTraceFile(path.join(tracesDir, savedName));
    expect(saved.complete).toBe(true);
    expect(saved.truncatedTail).toBe(false);
    const savedRounds = saved.events.flatMap((e) => (e.type === 'round' ? [e.report] : []));
    expect(savedRounds.length).toBeGreaterThan(afterKill);

    // End the job: its report has rank 3 dead, and the window says the job ended.
    await exec('scancel', [id], { env: cluster.env });
    const result = await done;
    job = null;
    const report = JSON.parse(result.stdout) as {
      dead: number[];
      job: { state: string };
      ended: string;
      rounds: unknown[];
    };
    expect(report.job.state).toBe('CANCELLED');
    expect(report.dead).toContain(3);
    // The saved trace is the job's own, up to where it was saved: its bytes to its last record, its rounds.
    const savedBytes = fs.readFileSync(path.join(tracesDir, savedName));
    const cut = savedBytes.lastIndexOf('\n', savedBytes.length - 2) + 1;
    const jobBytes = fs.readFileSync(path.join(out, 'trace.ndjson'));
    expect(jobBytes.subarray(0, cut).equals(savedBytes.subarray(0, cut))).toBe(true);
    expect(savedRounds).toEqual(report.rounds.slice(0, savedRounds.length));
    await expect.poll(() => banner.textContent(), WAIT).toMatch(/has ended/);
  }, 300_000);
});
