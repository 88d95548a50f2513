import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { parseElectronArgs } from './args';

describe('the Electron shell flags', () => {
  it('takes --trace and --traces-dir, and leaves other switches alone', () => {
    expect(parseElectronArgs([], '/home/u/relay-lab-traces')).toEqual({
      tracesDir: '/home/u/relay-lab-traces',
    });
    expect(
      parseElectronArgs(['--no-sandbox', '--trace', 'a.trace.ndjson', '--traces-dir', '/t'], '/d'),
    ).toEqual({
      tracesDir: '/t',
      trace: path.resolve('a.trace.ndjson'),
    });
    // A flag without its value is ignored rather than swallowing the next switch.
    expect(parseElectronArgs(['--trace', '--inspect'], '/d')).toEqual({ tracesDir: '/d' });
    // Live taps: the raw values, parsed with their salt by tapsOfFlags (src-shared/lab/tap-spec.ts).
    expect(
      parseElectronArgs(['--tap', '7001=h:7000@h0.uplink', '--salt', 'ab', '--tap', '7002=h:7000'], '/d'),
    ).toEqual({
      tracesDir: '/d',
      tapFlags: ['7001=h:7000@h0.uplink', '7002=h:7000'],
      salt: 'ab',
    });
  });
});
