// Issue 30 item 9: during a replay the window showed "reproRecord: BUSY: more
// than 64 commands are still running". While a reproduction ran, every command
// but the snapshot waited for it, and the Record button's once-a-second query
// of what Record has captured piled up behind a replay of a minute or more,
// past browser mode's 64 commands per client. Record's state touches no
// topology: it is answered at once, and so are its on/off switches.
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LabBatch, ReplyOf } from '@shared/lab/contract';
import type { SessionSnapshot } from '@shared/lab/state';
import { MAX_PENDING_COMMANDS } from '../web/protocol';
import { LabHost, type LiveSession } from './lab-host';
import type { TopologyCommand, TopologyCommandType } from './commands/handler';

class SessionStandIn implements LiveSession {
  readonly activeCluster = null;
  async command(): Promise<ReplyOf<TopologyCommandType>> {
    return { ok: true };
  }
  subscribe(_l: (b: LabBatch) => void) {
    return () => {};
  }
  snapshot(): SessionSnapshot {
    return {
      running: true,
      config: {} as SessionSnapshot['config'],
      saltHex: '00'.repeat(16),
      hosts: [],
      ranks: [],
      links: [],
      round: 7,
      roundsCompleted: 7,
      roundsPaused: false,
      startedAt: 1,
    };
  }
  async stop() {}
}

describe('LabHost while a reproduction runs', () => {
  it("answers Record's state at once, however many queries a long replay sees", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-busy-'));
    const host = new LabHost(new SessionStandIn(), { tracesDir: dir, workDir: dir });
    try {
      let release!: () => void;
      // A replay holding the machine (runRepro runs inside runExclusive).
      const replay = host.runExclusive(() => new Promise<void>((r) => (release = r)));
      const order: string[] = [];
      // More than a client may have running at once: a minute and more of the button's queries.
      const queries = Array.from({ length: MAX_PENDING_COMMANDS + 6 }, () =>
        host.command({ type: 'reproRecord' }),
      );
      const switched = host.command({ type: 'reproRecord', on: true });
      const answered = Promise.all([...queries, switched]).then((replies) => {
        order.push('answered');
        return replies;
      });
      // Only promise turns separate the queries from their replies (no I/O): let them turn.
      await new Promise((r) => setTimeout(r, 50));
      order.push('replay ended');
      release();
      await replay;
      const replies = await answered;
      expect(order).toEqual(['answered', 'replay ended']);
      expect(replies.every((r) => r.ok)).toBe(true);
      expect(replies.at(-1)).toMatchObject({ ok: true, recording: { on: true, fromRound: 7 } });
      // A command about the topology still waits for the replay (it owns the ports and processes).
      let release2!: () => void;
      const replay2 = host.runExclusive(() => new Promise<void>((r) => (release2 = r)));
      const order2: string[] = [];
      const kill = host
        .command({ type: 'killRank', rank: 0 } as TopologyCommand)
        .then(() => order2.push('kill'));
      await new Promise((r) => setTimeout(r, 50));
      order2.push('replay ended');
      release2();
      await replay2;
      await kill;
      expect(order2).toEqual(['replay ended', 'kill']);
    } finally {
      await host.shutdown();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
