// `relay-lab run` through the real command line, and the no-orphans rule:
// when the process hosting the engine dies by SIGKILL, every rank process
// ends too, even a stopped one.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { pidAlive } from '../../engine/rank-process';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const bin = path.join(root, 'bin', 'relay-lab.mjs');

function cli(args: string[]) {
  const child = spawn(process.execPath, [bin, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const done = new Promise<{ code: number | null; out: string; err: string }>((r) => child.on('exit', (code) => r({ code, out, err })));
  return { child, done };
}

/** Child processes of `pid` running the rank entry (Linux /proc). */
function rankChildren(pid: number): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid && fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('rank.mjs')) out.push(Number(d));
    } catch {
      // the process went away while we looked
    }
  }
  return out;
}

describe('relay-lab run', () => {
  it('prints the JSON report and exits 0 when the verdict is ok', async () => {
    const { done } = cli(['run', '--hosts', '2', '--ranks-per-host', '1', '--rounds', '2', '--model-bytes', '2KiB', '--json']);
    const { code, out, err } = await done;
    expect(code, err).toBe(0);
    const report = JSON.parse(out);
    expect(report).toMatchObject({ mode: 'fold', hosts: 2, ranksPerHost: 1, modelBytes: 2048, roundsCompleted: 2, dead: [], verdict: 'ok' });
    expect(report.rounds).toHaveLength(2);
    expect(report.uplinkBytesPerHost).toHaveLength(2);
    expect(report.links.map((l: { id: string }) => l.id)).toContain('h1.uplink.data');
  });

  it('rejects bad flags with exit 2', async () => {
    const { code, err } = await cli(['run', '--mode', 'sideways']).done;
    expect(code).toBe(2);
    expect(err).toMatch(/--mode must be one of fold, forward, direct/);
    const bad = await cli(['run', '--link-fault', 'h0.uplink.data@1:up:melt=3']).done;
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/'melt=3' is not one of/);
  });

  it('leaves no rank behind when its parent is killed with SIGKILL, even a stopped rank', async () => {
    if (process.platform !== 'linux') return;
    const { child, done } = cli(['run', '--hosts', '1', '--ranks-per-host', '2', '--rounds', '100000', '--model-bytes', '1KiB']);
    let ranks: number[] = [];
    await expect.poll(() => (ranks = rankChildren(child.pid!)).length, { timeout: 20_000, interval: 50 }).toBe(2);
    process.kill(ranks[0], 'SIGSTOP');
    child.kill('SIGKILL');
    await done;
    await expect.poll(() => ranks.filter(pidAlive), { timeout: 10_000, interval: 50 }).toEqual([]);
  });
});
