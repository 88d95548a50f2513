// Issue 30 item 9, the window's side: the Record button asks what Record has
// captured once a second; a query still unanswered (the host busy with a
// replay) is not joined by another, so the window never piles commands up.
import { afterEach, describe, expect, it } from 'vitest';
import type { AnyCommand, LabApi } from '@shared/lab/contract';
import { attachLab } from './lab-store';
import { refreshRecording, useRepro } from './repro-store';

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
