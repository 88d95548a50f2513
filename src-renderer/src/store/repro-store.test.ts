// Issue 30 item 9, the window's side: the Record button asks what Record has
// captured once a second; a query still unanswered (the host busy with a
// replay) is not joined by another, so the window never piles commands up.
import { afterEach, describe, expect, it } from 'vitest';
import type { AnyCommand, LabApi } from '@shared/lab/contract';
import { attachLab } from './lab-store';
import { draftReproduction, FILES_TAB, refreshRecording, useRepro } from './repro-store';
import { useScenarios } from './scenario-store';

let detach: () => void = () => {};
afterEach(() => detach());

describe("Record's state query", () => {
  it('keeps at most one query in flight', async () => {
    const sent: string[] = [];
    const waiting: (() => void)[] = [];
    const lab: LabApi = {
      command: (async (cmd: AnyCommand) => {
        sent.push(cmd.type);
        await new Promise<void>((r) => waiting.push(r));
        return { ok: true, recording: { on: true, actions: 3, rounds: 9, fromRound: 2 } };
      }) as LabApi['command'],
      subscribe: () => () => {},
    };
    detach = attachLab(lab);
    const polls = Array.from({ length: 70 }, () => refreshRecording());
    expect(sent.filter((t) => t === 'reproRecord')).toHaveLength(1);
    for (const w of waiting.splice(0)) w();
    await Promise.all(polls);
    expect(useRepro.getState().recording).toMatchObject({ actions: 3 });
    // Answered: the next query goes out.
    const next = refreshRecording();
    expect(sent.filter((t) => t === 'reproRecord')).toHaveLength(2);
    for (const w of waiting.splice(0)) w();
    await next;
  });
});

describe('Stopping Record opens the Reproductions dialog', () => {
  it("with its list of historical reproductions loaded, not 'Loading…' for good", async () => {
    useScenarios.setState({ open: false, list: null, picked: null, error: null });
    const sent: string[] = [];
    const lab: LabApi = {
      command: (async (cmd: AnyCommand) => {
        sent.push(cmd.type);
        if (cmd.type === 'listScenarios')
          return {
            ok: true,
            scenarios: [{ name: 'mid-frame-desync', number: 1, title: 'Mid-frame desync' }],
          };
        return { ok: true, text: '{}', recording: { on: false, actions: 1, rounds: 2, fromRound: 0 } };
      }) as LabApi['command'],
      subscribe: () => () => {},
    };
    detach = attachLab(lab);
    await draftReproduction();
    const s = useScenarios.getState();
    expect(s.open).toBe(true);
    expect(s.picked).toBe(FILES_TAB);
    expect(sent).toContain('listScenarios');
    expect(s.list?.map((x) => x.name)).toEqual(['mid-frame-desync']);
  });
});
