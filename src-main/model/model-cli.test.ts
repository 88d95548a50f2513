// relay-lab calibrate, predict and sweep --predict through the real command
// line: the output's shape and the named usage errors (exit 2). No timings are
// asserted; the prediction's accuracy is the slow suite's (model-validation.slow.test.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCalibration } from '@shared/model/calibration';
import { REFERENCE_CALIBRATION } from '@shared/model/reference-calibration';
import type { SweepResult } from '@shared/sweep/types';
import { relayLab } from '../cli/testing/relay-lab-cli';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'model-cli-'));
const refFile = path.join(dir, 'reference.json');
fs.writeFileSync(refFile, JSON.stringify(REFERENCE_CALIBRATION));

describe('relay-lab predict', { timeout: 120_000 }, () => {
  it('512 hosts x 8 ranks, 1 GiB, 12.5 GB/s NICs: per mode round, bottleneck, NIC bytes, lead, curve (JSON)', async () => {
    const r = await relayLab([
      'predict',
      ...['--hosts', '512', '--ranks-per-host', '8', '--model-bytes', '1GiB'],
      ...['--host-bandwidth', '12.5GB/s', '--controller-bandwidth', '100Gb/s'],
      ...['--calibration', refFile, '--json'],
    ]);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.format).toBe('relay-lab-predict');
    expect(j.input.controllerNic.bandwidth).toBe(12.5e9);
    for (const mode of ['fold', 'direct']) {
      const m = j.modes[mode];
      expect(m.bottleneck.resource).toBe('controllerIngress');
      expect(m.roundMs).toBeGreaterThan(0);
      expect(Object.keys(m.nicBytesPerRound).sort()).toEqual([
        'controllerIn',
        'controllerOut',
        'hostDown',
        'hostUp',
      ]);
      expect(m.controllerNicToMove).toBeGreaterThan(12.5e9);
      expect(m.curve.map((c: { hosts: number }) => c.hosts)).toContain(512);
      expect(Array.isArray(m.moves)).toBe(true);
    }
    expect(j.lead.direct).toBeGreaterThan(1);
    expect(j.modes.fold.afterMove.bottleneck.resource).not.toMatch(/^controller/);
  });

  it('prints a readable summary without --json', async () => {
    const r = await relayLab(['predict', '--hosts', '16', '--calibration', refFile]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^fold: round .* bottleneck /m);
    expect(r.out).toMatch(/fold's lead over direct: \d+\.\d\dx \(K = 4\)/);
    expect(r.out).toMatch(/round against hosts: 1: /);
  });

  it('input out of range or unreadable is a one-line usage error (exit 2)', async () => {
    for (const [args, msg] of [
      [['--hosts', '5000'], /--hosts: 5000 is outside 1 to 4096/],
      [['--ranks-per-host', '17'], /--ranks-per-host: 17 is outside 1 to 16/],
      [['--host-bandwidth', '12XB'], /--host-bandwidth: .*12.5GB\/s/],
      [['--controller-latency', 'soon'], /--controller-latency: /],
      [['--calibration', path.join(dir, 'missing.json')], /calibration: no file at/],
    ] as const) {
      const r = await relayLab(['predict', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err).toMatch(msg);
    }
  });
});

describe('relay-lab calibrate', { timeout: 180_000 }, () => {
  it('writes a calibration the model reads', async () => {
    const out = path.join(dir, 'sub', 'calibration.json');
    const r = await relayLab(['calibrate', '--bytes', '1MiB', '--out', out]);
    expect(r.code).toBe(0);
    const c = parseCalibration(JSON.parse(fs.readFileSync(out, 'utf8')));
    expect(c.cores).toBe(os.cpus().length);
    expect(c.primitives?.primitiveBytes).toBe(2 ** 20);
  });
});

describe('relay-lab sweep --predict', { timeout: 180_000 }, () => {
  it('puts the prediction beside every case', async () => {
    const r = await relayLab([
      'sweep',
      ...['--topologies', '1x2', '--modes', 'fold,direct', '--model-bytes', '4KiB', '--rounds', '2'],
      ...['--predict', '--calibration', refFile, '--json'],
    ]);
    expect(r.code).toBe(0);
    const s = JSON.parse(r.out) as SweepResult;
    expect(s.cases).toHaveLength(2);
    for (const c of s.cases) {
      expect(c.predicted!.roundMs).toBeGreaterThan(0);
      expect(c.predicted!.tolerance).toBe(0.4);
      expect(typeof c.predicted!.within).toBe('boolean');
      expect(c.predicted!.bottleneck.stage).toBeTruthy();
    }
  });

  it('--calibration needs --predict and an existing file (exit 2)', async () => {
    const a = await relayLab(['sweep', '--calibration', refFile]);
    expect(a.code).toBe(2);
    expect(a.err).toMatch(/--calibration goes with --predict/);
    const b = await relayLab(['sweep', '--predict', '--calibration', path.join(dir, 'none.json')]);
    expect(b.code).toBe(2);
    expect(b.err).toMatch(/--calibration: no file at/);
  });
});
