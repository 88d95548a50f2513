#!/usr/bin/env node
// A default session as a person meets it (`npm start -- --browser`, the window
// open in Chromium), left running for minutes while other work loads the
// cores, then asked what went wrong: stall findings, ranks or hosts lost that
// nobody killed, rounds whose verdict was not ok. The claim it checks (issue
// 10): the default topology on a loaded 2-core machine loses no rank in ten
// minutes and shows no stall finding while its rounds are healthy.
//
//   npm run soak:session -- [--minutes 10] [--hogs 2] [--no-window] [--json]
//
// --hogs N starts N busy-loop processes beside the lab (the "other work");
// the load average is sampled every 10 s and reported. Exit 0 when nothing
// was lost, 1 otherwise. A long measurement, never part of `npm test`.
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function parseArgs(argv) {
  const o = { minutes: 10, hogs: 2, window: true, json: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = (name) => {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v < 0) throw new Error(`${name} needs a number >= 0, got ${argv[i]}`);
      return v;
    };
    if (a === '--minutes') o.minutes = num(a);
    else if (a === '--hogs') o.hogs = Math.floor(num(a));
    else if (a === '--no-window') o.window = false;
    else if (a === '--json') o.json = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

/** Busy loops at normal priority: the lab competes with them as with any other work. */
function startHogs(n) {
  return Array.from({ length: n }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
}

/** `npm start -- --browser --no-open`, resolved with the URL line it prints. */
function launchLab() {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  const child = spawn('npm', ['start', '--', '--browser', '--no-open'], {
    cwd: root,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL from npm start in 120 s:\n${out}`)), 120_000);
    const onData = (c) => {
      out += c.toString();
      const m = /^(http:\/\/127\.0\.0\.1:(\d+)\/\?token=(\S+))$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1], port: Number(m[2]), token: m[3] });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (c) => (out += c.toString()));
    child.once('exit', (code) => reject(new Error(`npm start exited (${code}):\n${out}`)));
  });
}

function stopGroup(child) {
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    // already gone
  }
}

async function openWindow(url) {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.goto(url);
  return browser;
}

/** Follows the lab's event stream as a second client of its own server. */
function follow(port, token) {
  const seen = { findings: [], rounds: [], snapshot: null };
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${token}`, {
    headers: { Origin: `http://127.0.0.1:${port}` },
  });
  let nextId = 1;
  const pending = new Map();
  ws.on('message', (data) => {
    const msg = JSON.parse(data.toString());
    if (msg.type === 'reply') pending.get(msg.id)?.(msg.reply);
    if (msg.type !== 'batch') return;
    for (const e of msg.batch.events) {
      if (e.type === 'finding') seen.findings.push(e.finding);
      else if (e.type === 'round') seen.rounds.push(e.report);
      else if (e.type === 'snapshot') seen.snapshot = e.snapshot;
    }
  });
  const command = (cmd) =>
    new Promise((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      ws.send(JSON.stringify({ id, command: cmd }));
    });
  const opened = new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return { seen, command, opened, close: () => ws.close() };
}

const quantile = (xs, q) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const hogs = startHogs(opts.hogs);
  const loads = [];
  const loadTimer = setInterval(() => loads.push(os.loadavg()[0]), 10_000);
  let lab = null;
  let browser = null;
  try {
    lab = await launchLab();
    const client = follow(lab.port, lab.token);
    await client.opened;
    if (opts.window) browser = await openWindow(lab.url);
    const startedAt = Date.now();
    await new Promise((r) => setTimeout(r, opts.minutes * 60_000));
    const snap = await client.command({ type: 'snapshot' });
    const snapshot = snap.ok ? snap.snapshot : client.seen.snapshot;
    const rounds = client.seen.rounds;
    const byKind = {};
    for (const f of client.seen.findings) byKind[f.kind] = (byKind[f.kind] ?? 0) + 1;
    const ranksLost = (snapshot?.ranks ?? []).filter((r) => r.state !== 'alive');
    const hostsLost = (snapshot?.hosts ?? []).filter((h) => h.state !== 'up');
    const durations = rounds.map((r) => r.durationMs);
    const report = {
      minutes: (Date.now() - startedAt) / 60_000,
      hogs: opts.hogs,
      window: opts.window,
      cores: os.cpus().length,
      loadAverage: { min: Math.min(...loads), median: quantile(loads, 0.5), max: Math.max(...loads) },
      topology: snapshot
        ? `${snapshot.config.ranksPerHost.length} hosts x ${snapshot.config.ranksPerHost.join('+')} ranks, ${snapshot.config.modelBytes} B, interval ${snapshot.config.roundIntervalMs} ms, staleness ${snapshot.config.stalenessMs} ms`
        : null,
      rounds: rounds.length,
      verdicts: {
        ok: rounds.filter((r) => r.verdict === 'ok').length,
        mismatch: rounds.filter((r) => r.verdict === 'mismatch').length,
        unchecked: rounds.filter((r) => r.verdict === 'unchecked').length,
      },
      roundMs: {
        median: quantile(durations, 0.5),
        p99: quantile(durations, 0.99),
        max: Math.max(...durations),
      },
      findings: byKind,
      stallFindings: client.seen.findings.filter((f) => f.kind === 'stalled').map((f) => f.message),
      ranksLost: ranksLost.map((r) => ({ rank: r.rank, state: r.state })),
      hostsLost: hostsLost.map((h) => ({ host: h.host, state: h.state })),
    };
    client.close();
    const healthy =
      report.rounds > 0 &&
      report.ranksLost.length === 0 &&
      report.hostsLost.length === 0 &&
      report.stallFindings.length === 0 &&
      report.verdicts.mismatch === 0;
    if (opts.json) console.log(JSON.stringify({ ...report, healthy }, null, 2));
    else {
      console.log(
        `soak: ${report.minutes.toFixed(1)} min, ${report.hogs} hogs, load ${report.loadAverage.median}`,
      );
      console.log(`  ${report.topology}`);
      console.log(
        `  rounds ${report.rounds} (ok ${report.verdicts.ok}, mismatch ${report.verdicts.mismatch}), median ${report.roundMs.median?.toFixed(0)} ms, p99 ${report.roundMs.p99?.toFixed(0)} ms`,
      );
      console.log(`  findings ${JSON.stringify(report.findings)}; ranks lost ${report.ranksLost.length}`);
      console.log(healthy ? 'healthy' : 'NOT healthy');
    }
    process.exitCode = healthy ? 0 : 1;
  } finally {
    clearInterval(loadTimer);
    for (const h of hogs) h.kill('SIGKILL');
    await browser?.close().catch(() => {});
    if (lab) stopGroup(lab.child);
  }
}

main().catch((e) => {
  console.error(`soak-session: ${e.message}`);
  process.exitCode = 2;
});
