// A person leaves the lab open all day (issue 30 item 17): the default session
// in browser mode (out/node/web.mjs, as `npm start -- --browser` runs it, a
// follower on its WebSocket as a window would be), its engine's resident
// memory sampled from /proc every 30 s. After the warm-up (the tap's 64 MiB of
// captured bytes and its record window fill in the first minutes) the curve
// must be flat: the last quarter's mean within 10% + 16 MiB of the second
// quarter's. The curve is printed. RELAY_LAB_SOAK_MINUTES sets the length
// (default 60; the session-soak measurement in the report used 10).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { spawnTied } from '../shell-common/tied-spawn';
import { repoRoot } from '../cli/testing/relay-lab-cli';

const MINUTES = Number(process.env.RELAY_LAB_SOAK_MINUTES ?? 60);
const SAMPLE_MS = 30_000;
const MIB = 1024 * 1024;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-session-memory-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

it(
  `the default session's engine memory stays flat over ${MINUTES} min`,
  { timeout: (MINUTES + 5) * 60_000 },
  async () => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.NODE_EXTRA_CA_CERTS;
    // The follower below is the window; the page itself is not needed (a stub, so no renderer build).
    const page = path.join(dir, 'renderer');
    fs.mkdirSync(page);
    fs.writeFileSync(path.join(page, 'index.html'), '<!doctype html><title>relay-lab</title>');
    const web = spawnTied(
      process.execPath,
      [
        path.join(repoRoot, 'out/node/web.mjs'),
        '--no-open',
        '--traces-dir',
        path.join(dir, 'traces'),
        '--renderer',
        page,
      ],
      { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      const url = await new Promise<URL>((resolve, reject) => {
        let out = '';
        web.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /^(http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)$/m.exec(out);
          if (m) resolve(new URL(m[1]!));
        });
        let err = '';
        web.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
        web.once('exit', (code) => reject(new Error(`web.mjs exited (${code}): ${out}${err}`)));
      });
      let rounds = 0;
      let notOk = 0;
      const ws = new WebSocket(`ws://${url.host}/ws?token=${url.searchParams.get('token')}`, {
        headers: { Origin: url.origin },
      });
      ws.on('message', (data) => {
        const msg = JSON.parse(data.toString()) as {
          type: string;
          batch?: { events: { type: string; report?: { verdict: string } }[] };
        };
        for (const e of msg.batch?.events ?? [])
          if (e.type === 'round') {
            rounds++;
            if (e.report?.verdict !== 'ok') notOk++;
          }
      });
      await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
      const samples: { min: number; rounds: number; rssMiB: number }[] = [];
      const t0 = Date.now();
      while (Date.now() - t0 < MINUTES * 60_000) {
        await new Promise((r) => setTimeout(r, SAMPLE_MS));
        const s = {
          min: +((Date.now() - t0) / 60_000).toFixed(1),
          rounds,
          rssMiB: +(rssOf(web.pid!) / MIB).toFixed(1),
        };
        samples.push(s);
        process.stderr.write(`session-memory: ${JSON.stringify(s)}\n`);
      }
      ws.close();
      const rss = samples.map((s) => s.rssMiB);
      const q = Math.floor(rss.length / 4);
      const second = mean(rss.slice(q, 2 * q));
      const last = mean(rss.slice(3 * q));
      process.stderr.write(
        `session-memory: ${rounds} rounds (${notOk} not ok) in ${MINUTES} min; RSS second quarter ${second.toFixed(1)} MiB, last quarter ${last.toFixed(1)} MiB\n`,
      );
      expect(rounds).toBeGreaterThan(0);
      expect(notOk).toBe(0);
      expect(last).toBeLessThanOrEqual(second * 1.1 + 16);
    } finally {
      web.kill('SIGTERM');
    }
  },
);
