// Every reproduction through the real command line (`relay-lab scenario NAME
// --json`), its verdict checked: the bug reproduced under the historical
// behaviour and flodl 0.7's behaviour held. No process a scenario started may
// outlive it.
import { describe, expect, it } from 'vitest';
import type { ScenarioInfo, ScenarioResult } from '@shared/lab/contract';
import { pidAlive } from '../../engine/rank-process';
import { relayLab } from '../../cli/testing/relay-lab-cli';

const cli = relayLab;

const EXPECTED = [
  'mid-frame-desync',
  'two-writers',
  'wedged-rank',
  'hostile-length',
  'slow-uplink',
  'control-replay',
  'idle-nan',
  'broken-host',
  'nagle',
  'stale-relay',
  'vanished-peer',
];

describe('relay-lab scenario', () => {
  it('--list --json lists the reproductions in order, each with a narrative', async () => {
    const r = await cli(['scenario', '--list', '--json']);
    expect(r.code).toBe(0);
    const list = JSON.parse(r.out) as ScenarioInfo[];
    expect(list.map((s) => s.name)).toEqual(EXPECTED);
    expect(list.map((s) => s.number)).toEqual(EXPECTED.map((_, i) => i + 1));
    for (const s of list) {
      expect(s.narrative.length).toBeGreaterThan(40);
      expect(s.historicalBehaviour).toMatch(/historical/);
    }
  });

  it('an unknown name or no name is a usage error (exit 2)', async () => {
    expect((await cli(['scenario', 'no-such-bug', '--json'])).code).toBe(2);
    expect((await cli(['scenario'])).code).toBe(2);
  });

  it.each(EXPECTED)('%s: reproduced historically, held in flodl 0.7, no process left', async (name) => {
    const r = await cli(['scenario', name, '--json']);
    const res = JSON.parse(r.out) as ScenarioResult;
    expect(res.name).toBe(name);
    expect(
      { error: res.error, historical: res.historical.reproduced, current: res.current.held },
      JSON.stringify({ historical: res.historical.evidence, current: res.current.evidence }),
    ).toEqual({ error: undefined, historical: true, current: true });
    expect(res.verdict).toBe('ok');
    expect(r.code).toBe(0);
    expect(res.processes.leftAlive).toEqual([]);
    expect(res.processes.started.filter(pidAlive)).toEqual([]);
  });
});
