// Cold start (issue 13): `npm start` of a built app to the first round's
// verdict, in wall-clock ms. The build is done first and not timed. Each run
// starts `npm start -- --browser --no-open --port 0` (browser mode: the same
// lab host, engine and ranks as the window; no browser is opened, no port
// remembered) with RELAY_LAB_REPORT_FIRST_VERDICT=1, waits for the line the
// lab prints when the first round's verdict is in, then stops the lab.
// A benchmark, not a test: `node scripts/cold-start.mjs [--runs N] [--json]`.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const runsAt = argv.indexOf('--runs');
const runs = runsAt >= 0 ? Number(argv[runsAt + 1]) : 3;
if (!Number.isInteger(runs) || runs < 1) {
  process.stderr.write('cold-start: --runs takes a positive integer\n');
  process.exit(2);
}
const json = argv.includes('--json');
const TIMEOUT_MS = 120_000;

const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'start.mjs'), '--build-only'], {
  cwd: root,
  stdio: 'inherit',
});
if (built.status !== 0) process.exit(built.status ?? 1);

const tracesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-cold-start-'));

/** One launch: ms from spawning `npm start` to the verdict line (and to the server's "running" line), and the verdict. */
function once() {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(
      'npm',
      ['start', '--silent', '--', '--browser', '--no-open', '--port', '0', '--traces-dir', tracesDir],
      {
        cwd: root,
        env: { ...process.env, RELAY_LAB_REPORT_FIRST_VERDICT: '1' },
        stdio: ['ignore', 'pipe', 'inherit'],
        // Its own process group: stopping the lab reaches npm, the launcher, the lab and its ranks.
        detached: true,
      },
    );
    let out = '';
    let result = null;
    let servingMs = null;
    const stop = () => {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`no verdict within ${TIMEOUT_MS} ms; output:\n${out}`));
    }, TIMEOUT_MS);
    child.stdout.on('data', (c) => {
      out += c;
      if (servingMs === null && out.includes('Relay Lab is running'))
        servingMs = Math.round(performance.now() - t0);
      const m = /first round verdict: (\S+)/.exec(out);
      if (m && !result) {
        result = { ms: Math.round(performance.now() - t0), servingMs, verdict: m[1] };
        clearTimeout(timer);
        stop();
      }
    });
    child.on('exit', () => {
      clearTimeout(timer);
      if (result) resolve(result);
      else reject(new Error(`the lab exited before its first verdict; output:\n${out}`));
    });
  });
}

const results = [];
try {
  for (let i = 0; i < runs; i++) results.push(await once());
} finally {
  fs.rmSync(tracesDir, { recursive: true, force: true });
}
const sorted = results.map((r) => r.ms).sort((a, b) => a - b);
const report = {
  what: 'npm start (built) to the first round verdict, browser mode, ms',
  runs: results,
  medianMs: sorted[Math.floor(sorted.length / 2)],
  loadAverage: os.loadavg(),
  target: 2000,
};
process.stdout.write((json ? JSON.stringify(report) : JSON.stringify(report, null, 2)) + '\n');
