// Nothing the lab starts outlives its parent (issue 17.2). The lab is started
// as a person starts it (`npm start`, or scripts/start.mjs) with a browser it
// opens, then one level at a time is killed with SIGKILL: a rank, the browser,
// the engine with its server, the launcher, npm itself. Two seconds after the
// kill landed nothing of what was below it runs; each check prints how long
// the slowest process actually took. Processes are known by pid and start
// time (a recycled pid is not the same process); a zombie is not running
// (this container's init does not reap, so the dead stay listed as zombies).
import { describe, it, expect } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findBrowser, root } from './support';

interface Proc {
  pid: number;
  ppid: number;
  start: string;
  cmd: string;
}

function readProc(pid: number): (Proc & { state: string }) | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    return { pid, ppid: Number(f[1]), start: f[19], state: f[0], cmd };
  } catch {
    return null;
  }
}

/** Every live process below `top` (and `top` itself). */
function tree(top: number): Proc[] {
  const all = fs
    .readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map((n) => readProc(Number(n)))
    .filter((p): p is Proc & { state: string } => p !== null && p.state !== 'Z');
  const out: Proc[] = [];
  const walk = (pid: number) => {
    const p = all.find((x) => x.pid === pid);
    if (p) out.push(p);
    for (const c of all.filter((x) => x.ppid === pid)) walk(c.pid);
  };
  walk(top);
  return out;
}

/** The same process (pid and start time) still running: not gone, not a zombie. */
function running(p: Proc): boolean {
  const now = readProc(p.pid);
  return now !== null && now.start === p.start && now.state !== 'Z' && now.state !== 'X';
}

const ranks = (procs: Proc[]) => procs.filter((p) => p.cmd.includes('out/node/rank.mjs'));
const BROWSER_MARK = 'relay-lab-lifetime-browser';
const browsers = (procs: Proc[]) => procs.filter((p) => p.cmd.includes(BROWSER_MARK));
const engine = (procs: Proc[]) => procs.find((p) => p.cmd.includes('out/node/web.mjs'));

/** A browser for the lab to open: real Chromium headless where there is one, a plain process otherwise. */
function browserStandIn(dir: string): string {
  const chromium = findBrowser();
  const exe = path.join(dir, 'browser.sh');
  // The mark in the profile path names every process of this browser, Chromium's helpers included.
  const body = chromium
    ? `exec '${chromium}' --headless=new --no-sandbox --disable-gpu --user-data-dir='${dir}/${BROWSER_MARK}' "$@"`
    : `exec node -e 'setInterval(() => {}, 1000)' '${BROWSER_MARK}'`;
  fs.writeFileSync(exe, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return exe;
}

interface Lab {
  top: ChildProcess;
  procs: () => Proc[];
  cleanup: () => void;
}

async function launch(viaNpm: boolean): Promise<Lab> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-lifetime-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: dir,
    DISPLAY: ':0',
    RELAY_LAB_BROWSER: browserStandIn(dir),
  };
  delete env.NODE_EXTRA_CA_CERTS;
  const args = ['--browser', '--traces-dir', path.join(dir, 'traces')];
  const top = viaNpm
    ? spawn('npm', ['start', '--', ...args], {
        cwd: root,
        env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(process.execPath, ['scripts/start.mjs', ...args], {
        cwd: root,
        env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
  let out = '';
  top.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  top.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const seen = new Map<string, Proc>();
  const procs = () => {
    for (const p of tree(top.pid!)) seen.set(`${p.pid}:${p.start}`, p);
    return tree(top.pid!);
  };
  const cleanup = () => {
    // Only what this test started: every process it saw, by pid and start time.
    for (const p of seen.values())
      if (running(p))
        try {
          process.kill(p.pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await expect
      .poll(
        () => {
          const t = procs();
          return ranks(t).length === 8 && browsers(t).length > 0 && /Opened in/.test(out);
        },
        { timeout: 120_000, interval: 250 },
      )
      .toBe(true);
  } catch (e) {
    cleanup();
    throw new Error(`the lab did not come up: ${(e as Error).message}\n${out}`, { cause: e });
  }
  return { top, procs, cleanup };
}

/** The requirement (issue 17.2): nothing below a SIGKILLed level runs 2 s after the kill landed. */
const REQUIRED_MS = 2000;
/**
 * How long the check keeps watching before it gives up on a process: well past the requirement,
 * so a slow exit is measured and reported (with its time) instead of cut off at 2 s.
 */
const WATCH_MS = 30_000;

/**
 * Kills `victim` with SIGKILL and measures, for every process in `below`, how long after the kill
 * landed (the victim seen gone) it was seen gone. Polls each pid's own /proc entry every 20 ms, so
 * a reading is late by at most one poll (plus scheduling on a loaded machine): the times are
 * upper bounds. Every process must be gone within REQUIRED_MS of the kill landing.
 */
async function killAndCheck(level: string, victim: Proc, below: Proc[]): Promise<void> {
  const sent = performance.now();
  process.kill(victim.pid, 'SIGKILL');
  const goneAt = new Map<Proc, number>();
  let landed: number | null = null;
  const deadline = sent + WATCH_MS;
  while (performance.now() < deadline) {
    const now = performance.now();
    if (landed === null && !running(victim)) landed = now;
    for (const p of below) if (!goneAt.has(p) && !running(p)) goneAt.set(p, now);
    if (landed !== null && goneAt.size === below.length) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const from = landed ?? sent;
  const left = below.filter((p) => !goneAt.has(p));
  const times = below
    .filter((p) => goneAt.has(p))
    .map((p) => ({ ms: Math.round(goneAt.get(p)! - from), p }))
    .sort((a, b) => b.ms - a.ms);
  const slowest = times[0];
  // The figures, whatever the outcome: how long the slowest took, and which process it was.
  console.log(
    `process-lifetime: SIGKILL ${level} (pid ${victim.pid}): landed after ${Math.round(from - sent)} ms; ` +
      `${times.length}/${below.length} gone, the last ${slowest ? `${slowest.ms} ms after (${slowest.p.cmd.slice(0, 80)})` : '-'}` +
      (left.length ? `; still running after ${WATCH_MS} ms: ${left.map((p) => p.pid).join(', ')}` : ''),
  );
  expect(left.map((p) => `${p.pid} ${p.cmd.slice(0, 100)}`)).toEqual([]);
  expect(
    times
      .filter((t) => t.ms > REQUIRED_MS)
      .map((t) => `${t.p.pid} gone after ${t.ms} ms: ${t.p.cmd.slice(0, 100)}`),
  ).toEqual([]);
}

describe.runIf(process.platform === 'linux')('nothing the lab starts outlives its parent', () => {
  it('a rank, then the browser, then the launcher (scripts/start.mjs), each SIGKILLed', async () => {
    const lab = await launch(false);
    try {
      let t = lab.procs();
      const rank = ranks(t)[0];
      await killAndCheck('a rank', rank, [rank]);
      // The browser's own helpers (Chromium's zygotes, renderers, GPU) go with it.
      const browserMain = browsers(t).find((b) => !browsers(t).some((o) => o.pid === b.ppid))!;
      await killAndCheck('the browser', browserMain, tree(browserMain.pid));
      t = lab.procs();
      expect(engine(t)).toBeDefined();
      await killAndCheck('the launcher (scripts/start.mjs)', t[0], t);
    } finally {
      lab.cleanup();
    }
  }, 240_000);

  it('the engine with its server: its ranks, its browser and its launcher go', async () => {
    const lab = await launch(false);
    try {
      const t = lab.procs();
      await killAndCheck('the engine', engine(t)!, t);
    } finally {
      lab.cleanup();
    }
  }, 240_000);

  it('npm start itself: the launcher npm ran, and everything below it, go', async () => {
    const lab = await launch(true);
    try {
      const t = lab.procs();
      expect(t[0].cmd).toMatch(/npm/);
      await killAndCheck('npm start', t[0], t);
    } finally {
      lab.cleanup();
    }
  }, 240_000);
});
