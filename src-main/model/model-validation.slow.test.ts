// The round model against rounds that really ran (issue 33's done line):
// `relay-lab calibrate` measures this machine's primitives first (never a
// round of the case it predicts), then `relay-lab sweep --predict` runs the
// shaped 1 MiB cases and every one must be predicted within 25 % of its
// measured median. Timed, so it lives in the slow suite, for a quiet machine.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SweepResult } from '@shared/sweep/types';
import { predictionLine } from '@shared/model/validate-case';
import { relayLab } from '../cli/testing/relay-lab-cli';

describe('the round model against real rounds', () => {
  it('predicts every shaped 1 MiB case of 1x4, 2x2, 4x1, 2x3 in fold and direct within 25 %', async () => {
    const cal = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'model-slow-')), 'calibration.json');
    const c = await relayLab(['calibrate', '--out', cal]);
    expect(c.code, c.err).toBe(0);
    const { code, out, err } = await relayLab([
      'sweep',
      ...['--topologies', '1x4,2x2,4x1,2x3', '--modes', 'fold,direct', '--model-bytes', '1MiB'],
      ...['--uplink-bandwidth', '50000000', '--predict', '--calibration', cal, '--json'],
    ]);
    expect(code, err).toBe(0);
    const r = JSON.parse(out) as SweepResult;
    expect(r.cases).toHaveLength(8);
    const lines = r.cases.map(
      (x) =>
        `${x.topology} ${x.mode}: measured ${x.roundMs.median.toFixed(1)} ms, ${predictionLine(x.predicted!)}`,
    );
    console.log(lines.join('\n'));
    for (const [i, x] of r.cases.entries()) expect(x.predicted!.within, lines[i]).toBe(true);
  });
});
