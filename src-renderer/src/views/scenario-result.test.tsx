// The Reproductions dialog's result, rendered: one duration per run (its
// trace's span, under its picture), labelled, not three clocks (the side's
// wall time, the scenario's own `ms`, the timeline's span); counts agree
// with their nouns.
import { describe, it, expect, beforeEach } from 'vitest';
import { renderToStaticMarkup } from 'react-dom/server';
import type { ScenarioResult } from '@shared/lab/contract';
import type { RunPicture } from '@shared/repro/picture';
import { ScenariosDialog } from './ScenariosDialog';
import { useScenarios } from '../store/scenario-store';

const initial = { ...useScenarios.getInitialState() };

const picture = (durationMs: number, records: number): RunPicture => ({
  trace: 'repro-two-writers-x.trace.ndjson',
  durationMs,
  lanes: ['h0.uplink.data'],
  units: Array.from({ length: records }, (_, i) => ({
    seq: i,
    t: i,
    lane: 0,
    dir: 'up' as const,
    kind: 'HostFrame',
    ok: true,
  })),
  records,
  marks: [],
  rounds: [],
  decisive: { seq: 0, t: 0, lane: 0, label: '#0 HostFrame', why: 'the first unit the codec rejected' },
});

// two-writers as the new-user review saw it: 154 ms wall time, evidence ms 106, trace span 106.4 ms.
const result: ScenarioResult = {
  name: 'two-writers',
  title: 'Two writers on one socket',
  incident: 'WIRE.md 6.3',
  narrative: 'n',
  historicalBehaviour: 'h',
  historical: { reproduced: true, evidence: { writers: 2, recordsSent: 6, ms: 106 } },
  current: { held: true, evidence: { writers: 1, recordsSent: 6, ms: 180 } },
  verdict: 'ok',
  timings: { historicalMs: 154, currentMs: 180.2, totalMs: 334 },
  processes: { started: [], leftAlive: [] },
  pictures: { historical: picture(106.4, 4), current: picture(171.6, 1) },
};

describe('the reproduction result', () => {
  beforeEach(() => Object.assign(useScenarios.getInitialState(), initial));

  it('gives each run one duration, labelled, and counts in agreement', () => {
    Object.assign(useScenarios.getInitialState(), {
      open: true,
      list: [
        {
          number: 2,
          name: 'two-writers',
          title: 't',
          incident: 'i',
          narrative: 'n',
          historicalBehaviour: 'h',
        },
      ],
      picked: 'two-writers',
      result,
    });
    const html = renderToStaticMarkup(<ScenariosDialog />);
    const text = html.replace(/<[^>]+>/g, '');
    expect(text).toContain('4 units on 1 link · traced for 106 ms');
    expect(text).toContain('1 unit on 1 link · traced for 172 ms');
    // Neither the side's wall time nor the scenario's own clock is a second duration for the run.
    expect(text).not.toMatch(/154 ms|180 ms|0\.11 s/);
    expect(text).not.toMatch(/\b1 links\b|\b1 units\b/);
    expect(html).not.toMatch(/<td class="mono">ms<\/td>/);
    expect(text).toContain('writers');
  });

  it('without pictures, the wall time is the one duration, labelled so', () => {
    Object.assign(useScenarios.getInitialState(), {
      open: true,
      list: [
        {
          number: 2,
          name: 'two-writers',
          title: 't',
          incident: 'i',
          narrative: 'n',
          historicalBehaviour: 'h',
        },
      ],
      picked: 'two-writers',
      result: { ...result, pictures: undefined },
    });
    const text = renderToStaticMarkup(<ScenariosDialog />).replace(/<[^>]+>/g, '');
    expect(text).toContain('wall time: historical 154 ms, flodl 0.7 180 ms');
  });
});
