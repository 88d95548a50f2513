// `relay-lab run` through the real command line, and the no-orphans rule:
// when the process hosting the engine dies by SIGKILL, every rank process
// ends too, even a stopped one.
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { startRelayLab } from '../testing/relay-lab-cli';

const cli = startRelayLab;

interface Proc {
  pid: number;
  /** Start time in clock ticks since boot: a pid reused by another process has another one. */
  start: string;
}

/** /proc/<pid>/stat fields after the command name: [state, ppid, ..., starttime at index 19]. */
function statFields(pid: number): string[] | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null; // the process went away while we looked
  }
}

const nodeBinary = fs.realpathSync(process.execPath);

/**
 * Child processes of `pid` that run the rank entry as Node. A rank starts as
 * setpriv, which arms the parent-death signal and then runs Node: only from
 * then on is the rank what the rule is about (a SIGSTOP before it would stop
 * setpriv itself, before anything could arm the signal).
 */
function rankChildren(pid: number): Proc[] {
  const out: Proc[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const f = statFields(Number(d));
    if (!f || Number(f[1]) !== pid) continue;
    try {
      if (fs.readlinkSync(`/proc/${d}/exe`) !== nodeBinary) continue;
      if (fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('rank.mjs'))
        out.push({ pid: Number(d), start: f[19] });
    } catch {
      // the process went away while we looked
    }
  }
  return out;
}

/**
 * Still running: the same process (pid and start time) and not a zombie. An
 * ended rank whose parent died waits as a zombie until init reaps it, which
 * init does on its own schedule (every ~2 s on some machines).
 */
function running(p: Proc): boolean {
  const f = statFields(p.pid);
  return !!f && f[19] === p.start && f[0] !== 'Z';
}

describe('relay-lab run', () => {
  it('prints the JSON report and exits 0 when the verdict is ok', async () => {
    const { done } = cli([
      'run',
      '--hosts',
      '2',
      '--ranks-per-host',
      '1',
      '--rounds',
      '2',
      '--model-bytes',
      '2KiB',
      '--json',
    ]);
    const { code, out, err } = await done;
    expect(code, err).toBe(0);
    const report = JSON.parse(out);
    expect(report).toMatchObject({
      mode: 'fold',
      hosts: 2,
      ranksPerHost: 1,
      modelBytes: 2048,
      roundsCompleted: 2,
      dead: [],
      verdict: 'ok',
    });
    expect(report.rounds).toHaveLength(2);
    expect(report.uplinkBytesPerHost).toHaveLength(2);
    expect(report.links.map((l: { id: string }) => l.id)).toContain('h1.uplink.data');
  });

  it('--starvation-ms reaches the relays: a Broadcast stalled mid-frame past it loses the host, as flodl presumes the peer gone', async () => {
    // The controller writes h0's consensus header, then stalls 3 s. flodl's 60 s starvation
    // waits it out; 1 s presumes the controller gone and the relay shuts h0's data channel.
    const args = ['run', '--hosts', '2', '--ranks-per-host', '1', '--model-bytes', '4KiB', '--rounds', '3'];
    const fault = ['--link-fault', 'h0.uplink.data@1:down:stallMs=3000', '--json'];
    const patient = await cli([...args, ...fault]).done;
    const starved = await cli([...args, '--starvation-ms', '1000', ...fault]).done;
    const a = JSON.parse(patient.out) as { dead: number[]; roundsCompleted: number };
    const b = JSON.parse(starved.out) as { dead: number[]; findings: { message: string }[] };
    expect(a.dead).toEqual([]);
    expect(a.roundsCompleted).toBe(3);
    expect(b.dead).toEqual([0]);
    expect(b.findings.map((f) => f.message).join('\n')).toMatch(
      /relay h0 \(data\): upstream: committed read starved mid-frame/,
    );
  }, 120_000);

  it('rejects bad flags with exit 2', async () => {
    const { code, err } = await cli(['run', '--mode', 'sideways']).done;
    expect(code).toBe(2);
    expect(err).toMatch(/--mode must be one of fold, forward, direct/);
    const bad = await cli(['run', '--link-fault', 'h0.uplink.data@1:up:melt=3']).done;
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/'melt=3' is not one of/);
    const negative = await cli(['run', '--rounds', '-1']).done;
    expect(negative.code).toBe(2);
    expect(negative.err).toMatch(/--rounds needs a value, got the flag-like '-1'/);
  });

  it('--trace saves a trace that trace info reads back: every round, every link, closed cleanly', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-run-trace-'));
    const file = path.join(dir, 'run.ndjson');
    try {
      const run = await cli([
        'run',
        '--hosts',
        '2',
        '--ranks-per-host',
        '1',
        '--rounds',
        '2',
        '--model-bytes',
        '1KiB',
        '--trace',
        file,
        '--json',
      ]).done;
      expect(run.code, run.err).toBe(0);
      const info = await cli(['trace', 'info', file, '--json']).done;
      expect(info.code, info.err).toBe(0);
      const t = JSON.parse(info.out);
      expect(t).toMatchObject({
        ranksPerHost: [1, 1],
        mode: 'fold',
        links: 8,
        complete: true,
        events: { round: 2 },
      });
      expect(t.events.record).toBeGreaterThan(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rejects inputs the engine cannot run before starting any process: exit 2, one named line, no stack trace', async () => {
    const cases: [string[], RegExp][] = [
      [['run', '--hosts', '100000'], /--hosts: 100000 is outside 1 to 16/],
      [['run', '--model-bytes', '100GiB'], /--model-bytes: 100GiB is outside 4 B to 512 MiB/],
      [['run', '--salt', 'ABC'], /BAD_CONFIG \(--salt\): config.saltHex: salt hex must be 32 chars, got 3/],
      [['run', '--link-fault', 'h9.uplink.data@1:up:reset'], /no link 'h9.uplink.data' in this topology/],
      [
        ['run', '--kill-rank', '3@99', '--rounds', '2'],
        /kill-rank at round 99 never happens: rounds are 0\.\.1/,
      ],
    ];
    for (const [args, message] of cases) {
      const { code, out, err } = await cli(args).done;
      expect({ args, code, out }).toEqual({ args, code: 2, out: '' });
      expect(err).toMatch(message);
      expect(err).not.toMatch(/\n\s+at /);
    }
  });

  it('leaves no rank behind when its parent is killed with SIGKILL, even a stopped rank', async () => {
    if (process.platform !== 'linux') return;
    const { child, done } = cli([
      'run',
      '--hosts',
      '1',
      '--ranks-per-host',
      '2',
      '--rounds',
      '100000',
      '--model-bytes',
      '1KiB',
    ]);
    let ranks: Proc[] = [];
    await expect
      .poll(() => (ranks = rankChildren(child.pid!)).length, { timeout: 20_000, interval: 50 })
      .toBe(2);
    process.kill(ranks[0].pid, 'SIGSTOP');
    child.kill('SIGKILL');
    await done;
    await expect.poll(() => ranks.filter(running), { timeout: 10_000, interval: 50 }).toEqual([]);
  });
});
