// How the host routes commands, against a recording stand-in for the session
// (no topology is started here: the real session is in lab-host.test.ts).
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MAX_HISTORY_EVENTS, type LabBatch, type ReplyOf } from '@shared/lab/contract';
import type { Finding, RoundReport } from '@shared/lab/records';
import type { SessionSnapshot } from '@shared/lab/state';
import { LabHost, suggestedTraceName, type LiveSession } from './lab-host';
import type { TopologyCommand, TopologyCommandType } from './commands/handler';
import { makeTraceHeader, TraceWriter } from './trace/ndjson';
import { sampleEvents, sampleHeader } from './trace/testing/sample-session';

class SessionStandIn implements LiveSession {
  readonly received: string[] = [];
  readonly activeCluster = null;
  private readonly listeners = new Set<(b: LabBatch) => void>();
  async command(cmd: TopologyCommand): Promise<ReplyOf<TopologyCommandType>> {
    this.received.push(cmd.type);
    return { ok: true, snapshot: this.snapshot() };
  }
  subscribe(l: (b: LabBatch) => void) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  emit(b: LabBatch) {
    for (const l of this.listeners) l(b);
  }
  snapshot(): SessionSnapshot {
    return {
      running: true,
      config: sampleHeader().config,
      saltHex: '00'.repeat(16),
      hosts: [],
      ranks: [],
      links: [],
      round: 0,
      roundsCompleted: 0,
      roundsPaused: false,
      startedAt: 1,
    };
  }
  async stop() {}
}

async function writeSample(dir: string, name: string): Promise<void> {
  const w = TraceWriter.toFile(path.join(dir, name), makeTraceHeader({ ...sampleHeader() }));
  for (const e of sampleEvents()) if (e.type !== 'end') w.write(e);
  await w.close();
}

describe('LabHost routing', () => {
  it('keeps trace commands to itself, sends the rest to the replay while one is open, and stop always to the session', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-routing-'));
    try {
      await writeSample(dir, 'sample.trace.ndjson');
      fs.writeFileSync(path.join(dir, 'notes.txt'), 'not a trace');
      const session = new SessionStandIn();
      const host = new LabHost(session, { tracesDir: dir, workDir: dir });
      const batches: LabBatch[] = [];
      host.subscribe((b) => batches.push(b));

      expect(await host.command({ type: 'pauseRounds' })).toMatchObject({ ok: true });
      expect(session.received).toEqual(['pauseRounds']);
      session.emit({ events: [{ type: 'log', level: 'info', message: 'live' }] });
      expect(batches).toHaveLength(1);

      const list = await host.command({ type: 'listTraces' });
      expect(list.ok && list.traces!.map((t) => t.name)).toEqual(['sample.trace.ndjson']);
      expect(await host.command({ type: 'openTrace', name: 'sample.trace.ndjson' })).toMatchObject({
        ok: true,
        view: { kind: 'trace', name: 'sample.trace.ndjson' },
      });
      // Live events are held back from the window while it shows the trace.
      batches.length = 0;
      session.emit({ events: [{ type: 'log', level: 'info', message: 'live' }] });
      expect(batches).toHaveLength(0);
      expect(await host.command({ type: 'pauseRounds' })).toMatchObject({ ok: false, error: 'OFFLINE' });
      expect(await host.command({ type: 'stop' })).toMatchObject({ ok: true });
      expect(session.received).toEqual(['pauseRounds', 'stop']);

      expect(await host.command({ type: 'seekTrace', t: 0 })).toMatchObject({
        ok: true,
        view: { kind: 'trace', t: 0 },
      });
      expect(batches.at(-1)!.events.slice(0, 2)).toMatchObject([
        { type: 'view' },
        { type: 'snapshot', reset: true },
      ]);
      const recent = await host.command({ type: 'recentRecords' });
      expect(recent).toMatchObject({ ok: true, view: { kind: 'trace' } });

      expect(await host.command({ type: 'closeTrace' })).toMatchObject({ ok: true, view: { kind: 'live' } });
      expect(batches.at(-1)!.events.slice(0, 2)).toMatchObject([
        { type: 'view', view: { kind: 'live' } },
        { type: 'snapshot', reset: true },
      ]);
      expect(session.received).toEqual(['pauseRounds', 'stop', 'snapshot']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps the session's findings in the catch-up however many rounds follow them (back from a tap or a capture)", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-routing-'));
    try {
      const session = new SessionStandIn();
      const host = new LabHost(session, { tracesDir: dir, workDir: dir });
      const snapshot = session.snapshot();
      session.emit({ events: [{ type: 'snapshot', snapshot }] });
      const dead: Finding = {
        id: 0,
        t: 5,
        severity: 'warn',
        kind: 'dead',
        message: 'rank 1 declared dead',
        ranks: [1],
      };
      session.emit({ events: [{ type: 'finding', finding: dead }] });
      // A long session after it: a round and the link counters each round, far past the history's length.
      for (let round = 0; round < MAX_HISTORY_EVENTS * 2; round++)
        session.emit({
          events: [
            { type: 'links', links: [] },
            { type: 'round', report: { round, accepted: [0], verdict: 'ok' } as RoundReport },
          ],
        });
      const caught = await host.catchUp();
      const history = caught.ok ? caught.history! : [];
      expect(history.filter((e) => e.type === 'finding')).toEqual([{ type: 'finding', finding: dead }]);
      expect(history.length).toBeLessThanOrEqual(MAX_HISTORY_EVENTS + 1);
      // The rounds kept are the newest, in order, after the finding that came before them.
      const rounds = history.flatMap((e) => (e.type === 'round' ? [e.report.round] : []));
      expect(rounds.at(-1)).toBe(MAX_HISTORY_EVENTS * 2 - 1);
      expect(history[0].type).toBe('finding');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('suggests sortable names', () => {
    expect(suggestedTraceName(new Date(Date.UTC(2026, 0, 2, 3, 4, 5)), 'ndjson')).toBe(
      'relay-lab-20260102-030405.trace.ndjson',
    );
    expect(suggestedTraceName(new Date(Date.UTC(2026, 0, 2, 3, 4, 5)), 'pcapng')).toBe(
      'relay-lab-20260102-030405.trace.pcapng',
    );
  });
});
