// `relay-lab sweep` through the real command line on a tiny model: every case
// on real rank processes, measured data-channel bytes equal to the theory,
// named usage errors, and Ctrl-C keeping the cases that finished.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AUTO_WARMUP } from '@shared/sweep/spec';
import type { SweepResult } from '@shared/sweep/types';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(root, 'bin', 'relay-lab.mjs');

function cli(args: string[]) {
  const child = spawn(process.execPath, [bin, 'sweep', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const errListeners: ((s: string) => void)[] = [];
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => {
    err += d;
    for (const l of errListeners) l(err);
  });
  const done = new Promise<{ code: number | null; out: string; err: string }>((r) =>
    child.on('close', (code) => r({ code, out, err })),
  );
  return { child, done, onErr: (l: (s: string) => void) => errListeners.push(l) };
}

describe('relay-lab sweep', () => {
  it('runs every topology x mode on real processes with measured uplink bytes equal to theory', async () => {
    const traceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sweep-cli-'));
    const { done } = cli([
      '--topologies',
      '1x2,2+1',
      '--modes',
      'fold,forward,direct',
      '--model-bytes',
      '4KiB',
      '--rounds',
      '2',
      '--trace-dir',
      traceDir,
      '--json',
    ]);
    const { code, out, err } = await done;
    expect(err).toContain('[1/6] 1x2 fold');
    expect(code).toBe(0);
    const r = JSON.parse(out) as SweepResult;
    expect(r.complete).toBe(true);
    expect(r.cases.map((c) => `${c.topology} ${c.mode}`)).toEqual([
      '1x2 fold',
      '1x2 forward',
      '1x2 direct',
      '2+1 fold',
      '2+1 forward',
      '2+1 direct',
    ]);
    const f = 17 + 2 + 8 + 8 + 4096 + 8;
    for (const c of r.cases) {
      expect(c.verdict).toBe('ok');
      expect(c.verdicts.ok).toBe(2);
      expect(c.dataUp.measured).toEqual(c.dataUp.theory);
      expect(c.dataDown.measured).toEqual(c.dataDown.theory);
      // The auto warm-up (the default) ran first and is in no figure: the counters restart after it.
      expect(c.warmupRounds).toBeGreaterThanOrEqual(AUTO_WARMUP.minRounds);
      expect(c.warmupRounds).toBeLessThanOrEqual(AUTO_WARMUP.maxRounds);
      expect(c.roundMs.each).toHaveLength(2);
      expect(c.memory.enginePeakRssBytes).toBeGreaterThan(0);
      // The bench's stage breakdown per case: the relay's stages only where there is a relay.
      const stages = Object.keys(c.stages?.medianMs ?? {});
      expect(stages).toContain('rankEncodeSend');
      expect(stages).toContain('rankVerify');
      expect(stages.includes('relayReceiveVerifyFold'), c.mode).toBe(c.mode !== 'direct');
      expect(fs.existsSync(path.join(traceDir, c.trace!))).toBe(true);
    }
    const byKey = (t: string, m: string) => r.cases.find((c) => c.topology === t && c.mode === m)!;
    expect(byKey('2+1', 'fold').dataUp.theory).toEqual([25 + f, 25 + f]);
    expect(byKey('2+1', 'forward').dataUp.theory).toEqual([2 * (25 + f), 25 + f]);
    expect(byKey('2+1', 'direct').dataUp.theory).toEqual([2 * (4 + f), 4 + f]);
    fs.rmSync(traceDir, { recursive: true, force: true });
  }, 300_000);

  it("--relay-cmd: every fold case on external relays (the lab relay under flodl's contract), bytes equal to theory", async () => {
    const { done } = cli([
      '--topologies',
      '1x2,2x1',
      '--modes',
      'fold,direct',
      '--model-bytes',
      '4KiB',
      '--rounds',
      '2',
      '--warmup',
      '1',
      '--relay-cmd',
      `${process.execPath} ${bin} relay --from-env`,
      '--json',
    ]);
    const { code, out, err } = await done;
    expect(code, err).toBe(0);
    const r = JSON.parse(out) as SweepResult;
    expect(r.spec.relayCommand).toContain('relay --from-env');
    for (const c of r.cases) {
      expect(c.verdict, `${c.topology} ${c.mode}`).toBe('ok');
      expect(c.dataUp.measured).toEqual(c.dataUp.theory);
      expect(c.dataDown.measured).toEqual(c.dataDown.theory);
    }
  }, 300_000);

  it.each([
    [['--relay-cmd', 'relay | tee x'], /relayCommand/],
    [['--modes', 'direct', '--relay-cmd', 'x'], /relayCommand applies to fold cases/],
    [['--topologies', '2y4'], /topology '2y4' must look like 2x4/],
    [['--modes', 'fold,relay'], /mode 'relay' must be one of/],
    [['--json', '--csv'], /--json and --csv exclude each other/],
    [['--rounds', '0'], /--rounds: 0 is outside 1 to 1000/],
    [['--warmup', 'two'], /--warmup/],
    [['--uplink-bandwidth', 'fast'], /--uplink-bandwidth: a size from 1000 B to 100 GiB/],
    [['--topologies', '1x1,9x8'], /topology '9x8': at most 64 ranks in all/],
  ])(
    'a usage error %j is named, exit 2',
    async (args, message) => {
      const { code, err, out } = await cli(args).done;
      expect(code).toBe(2);
      expect(err).toMatch(message);
      expect(out).toBe('');
    },
    60_000,
  );

  it('Ctrl-C (SIGINT) keeps and prints the cases that finished', async () => {
    const run = cli([
      '--topologies',
      '1x1,1x1,1x1,1x1',
      '--modes',
      'fold',
      '--model-bytes',
      '4KiB',
      '--rounds',
      '3',
      '--csv',
    ]);
    // Interrupt once the first case has finished.
    run.onErr((s) => {
      if (/\[1\/4\] 1x1 fold: median/.test(s)) run.child.kill('SIGINT');
    });
    const { code, out, err } = await run.done;
    expect(err).toContain('interrupted, keeping the finished cases');
    expect(code).toBe(1);
    const lines = out.trim().split('\n');
    expect(lines[0]).toMatch(/^topology,mode,/);
    // At least the first case, never all four.
    expect(lines.length - 1).toBeGreaterThanOrEqual(1);
    expect(lines.length - 1).toBeLessThan(4);
    for (const l of lines.slice(1)) expect(l).toMatch(/^1x1,fold,false,3\/3,/);
  }, 300_000);
});
