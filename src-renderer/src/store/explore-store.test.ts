import { describe, expect, it } from 'vitest';
import {
  applySweepBatch,
  DEFAULT_EXPLORE_FORM,
  formToSpec,
  openExplore,
  startSweep,
  useExplore,
} from './explore-store';
import type { SweepCase } from '@shared/sweep/types';
import type { AnyCommand, LabApi } from '@shared/lab/contract';
import { attachLab, useLab } from './lab-store';
import { emptyLabData } from './apply-batch';
import { snapshot } from '../test-fixtures';

describe('Explore form and progress', () => {
  it('turns the form into a checked sweep spec (MB/s are 10^6 bytes per second)', () => {
    expect(formToSpec(DEFAULT_EXPLORE_FORM)).toEqual({
      topologies: [[4], [2, 2], [1, 1, 1, 1]],
      modes: ['fold', 'direct'],
      modelBytes: 256 * 1024,
      dtype: 'f32',
      rounds: 3,
      warmupRounds: 'auto',
      uplinkBandwidth: 50_000_000,
    });
    const unshaped = formToSpec({ ...DEFAULT_EXPLORE_FORM, bandwidthMBps: ' ', topologies: '4+2+1' });
    expect(unshaped.uplinkBandwidth).toBeUndefined();
    expect(unshaped.topologies).toEqual([[4, 2, 1]]);
  });

  it('names a bad choice', () => {
    expect(() => formToSpec({ ...DEFAULT_EXPLORE_FORM, topologies: '2y2' })).toThrow(/must look like 2x4/);
    expect(() =>
      formToSpec({ ...DEFAULT_EXPLORE_FORM, modes: { fold: false, forward: false, direct: false } }),
    ).toThrow(/at least one mode/);
    expect(() => formToSpec({ ...DEFAULT_EXPLORE_FORM, modelBytes: 'big' })).toThrow(/Model size/);
    expect(() => formToSpec({ ...DEFAULT_EXPLORE_FORM, rounds: 'x' })).toThrow(/Rounds/);
    // The command line's ranges and words (number-ranges.ts): no 1e3, no Infinity, nothing past them.
    expect(() => formToSpec({ ...DEFAULT_EXPLORE_FORM, rounds: '1e3' })).toThrow(
      'Rounds: a whole number from 1 to 1000',
    );
    expect(() => formToSpec({ ...DEFAULT_EXPLORE_FORM, modelBytes: '100GiB' })).toThrow(
      'Model size: 100GiB is outside 4 B to 512 MiB',
    );
    expect(() => formToSpec({ ...DEFAULT_EXPLORE_FORM, latencyMs: '1000000000000' })).toThrow(
      'Uplink latency ms: 1000000000000 is outside 0 to 10000',
    );
    for (const bandwidthMBps of ['Infinity', 'NaN', '-5', '1e308', '0x10'])
      expect(() => formToSpec({ ...DEFAULT_EXPLORE_FORM, bandwidthMBps })).toThrow(
        /Uplink bandwidth: a number of MB\/s/,
      );
    expect(() => formToSpec({ ...DEFAULT_EXPLORE_FORM, warmupRounds: '-1' })).toThrow(/warm-up must be/);
    expect(formToSpec({ ...DEFAULT_EXPLORE_FORM, warmupRounds: '5' }).warmupRounds).toBe(5);
  });

  it('keeps each finished case once, in the order they come', () => {
    const c = (index: number) => ({ index, topology: '1x1', mode: 'fold' }) as SweepCase;
    applySweepBatch({
      events: [
        { type: 'sweep', progress: { done: 1, total: 2, current: null, state: 'running', finished: c(0) } },
        { type: 'sweep', progress: { done: 1, total: 2, current: null, state: 'running', finished: c(0) } },
        { type: 'sweep', progress: { done: 2, total: 2, current: null, state: 'running', finished: c(1) } },
        { type: 'log', level: 'info', message: 'not a sweep event' },
      ],
    });
    expect(useExplore.getState().partial.map((x) => x.index)).toEqual([0, 1]);
    expect(useExplore.getState().progress?.done).toBe(2);
  });
});

describe('Run sweep with a live session running', () => {
  it('shows the save at once, ignores a second click, and drops its notice once a new session runs', async () => {
    const sent: string[] = [];
    let finishSave: () => void = () => {};
    const lab: LabApi = {
      command: (async (cmd: AnyCommand) => {
        sent.push(cmd.type);
        if (cmd.type === 'saveTrace') {
          await new Promise<void>((resolve) => (finishSave = resolve));
          return { ok: true, trace: { name: 'live.ndjson', path: '/t/live.ndjson' } };
        }
        if (cmd.type === 'listSweeps') return { ok: true, sweeps: [] };
        return { ok: true };
      }) as LabApi['command'],
      subscribe: () => () => {},
    };
    const detach = attachLab(lab);
    useLab.setState({ ...emptyLabData(), snapshot: snapshot({ running: true, startedAt: 1000 }) });
    useExplore.setState({ live: 'save-and-stop', running: false, savingLive: false, liveNotice: null });

    const run = startSweep();
    // Before the save has answered: Run is already disabled and the window says what it is doing.
    expect(useExplore.getState()).toMatchObject({ running: true, savingLive: true });
    await startSweep();
    expect(sent).toEqual(['saveTrace']);
    finishSave();
    await run;
    expect(sent).toEqual(['saveTrace', 'stop', 'sweep', 'listSweeps']);
    expect(useExplore.getState()).toMatchObject({ running: false, savingLive: false });
    expect(useExplore.getState().liveNotice?.text).toBe('Live session saved as live.ndjson and stopped.');

    // The stopped session is still the one on screen: the notice stays.
    useLab.setState({ snapshot: snapshot({ running: false, startedAt: 1000 }) });
    expect(useExplore.getState().liveNotice).not.toBeNull();
    // A new Start: the notice is about a session that is gone.
    useLab.setState({ snapshot: snapshot({ running: true, startedAt: 2000 }) });
    expect(useExplore.getState().liveNotice).toBeNull();
    detach();
  });
});

describe('Saved sweeps when Explore opens before the connection', () => {
  it('asks again until the lab answers, and shows what it lists', async () => {
    let connected = false;
    let asked = 0;
    const lab: LabApi = {
      command: (async (cmd: AnyCommand) => {
        if (cmd.type !== 'listSweeps') return { ok: true };
        asked++;
        if (!connected) return { ok: false, error: 'NOT_CONNECTED', message: 'not connected to the lab' };
        return { ok: true, sweeps: [{ name: 'a.sweep.json', path: '/t/a.sweep.json', cases: 1 }] };
      }) as LabApi['command'],
      subscribe: () => () => {},
    };
    const detach = attachLab(lab);
    useExplore.setState({ saved: [] });
    const opened = openExplore();
    await new Promise((r) => setTimeout(r, 600));
    expect(asked).toBeGreaterThanOrEqual(2);
    expect(useExplore.getState().saved).toEqual([]);
    connected = true;
    await opened;
    expect(useExplore.getState().saved.map((s) => s.name)).toEqual(['a.sweep.json']);
    useExplore.setState({ open: false });
    detach();
  });
});
