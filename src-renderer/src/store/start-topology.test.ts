// Start never wipes a running live session silently: it asks, and each answer
// does exactly what it says (the button and Ctrl+Enter share startFromForm).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnyCommand, LabApi } from '@shared/lab/contract';
import { attachLab, useLab } from './lab-store';
import { emptyLabData } from './apply-batch';
import { chooseStart, startFromForm, useStartChoice } from './start-topology';
import { snapshot } from '../test-fixtures';

let sent: string[] = [];
let failSave = false;
let detach: () => void = () => {};

function fakeLab(): LabApi {
  return {
    command: (async (cmd: AnyCommand) => {
      sent.push(cmd.type);
      if (cmd.type === 'saveTrace' && failSave) return { ok: false, error: 'IO', message: 'disk full' };
      if (cmd.type === 'saveTrace')
        return { ok: true, trace: { name: 'live.ndjson', path: '/t/live.ndjson' } };
      return { ok: true };
    }) as LabApi['command'],
    subscribe: () => () => {},
  };
}

describe('Start while a session runs', () => {
  beforeEach(() => {
    sent = [];
    failSave = false;
    useLab.setState({ ...emptyLabData(), snapshot: snapshot({ running: true }), lastError: null });
    useStartChoice.setState({ pending: null, busy: null, error: null });
    detach = attachLab(fakeLab());
  });
  afterEach(() => detach());

  it('asks instead of starting, and Cancel leaves the session alone', async () => {
    expect(await startFromForm()).toBe(false);
    expect(sent).toEqual([]);
    expect(useStartChoice.getState().pending).toMatchObject({ ranksPerHost: [4, 4] });
    // A second Start (a double click, Ctrl+Enter) while asked changes nothing.
    expect(await startFromForm()).toBe(false);
    await chooseStart('cancel');
    expect(sent).toEqual([]);
    expect(useStartChoice.getState().pending).toBeNull();
  });

  it('Save trace first saves, then starts', async () => {
    await startFromForm();
    expect(await chooseStart('save-and-replace')).toBe(true);
    expect(sent).toEqual(['saveTrace', 'start']);
    expect(useStartChoice.getState().pending).toBeNull();
  });

  it('a failed save replaces nothing and says why', async () => {
    failSave = true;
    await startFromForm();
    expect(await chooseStart('save-and-replace')).toBe(false);
    expect(sent).toEqual(['saveTrace']);
    expect(useStartChoice.getState().error).toContain('disk full');
    expect(useStartChoice.getState().pending).not.toBeNull();
  });

  it('Replace starts without saving; with no session running Start starts at once', async () => {
    await startFromForm();
    expect(await chooseStart('replace')).toBe(true);
    expect(sent).toEqual(['start']);
    sent = [];
    useLab.setState({ snapshot: snapshot({ running: false }) });
    expect(await startFromForm()).toBe(true);
    expect(sent).toEqual(['start']);
  });
});
