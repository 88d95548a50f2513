// Record, Save and Open a reproduction through the lab host on a real live
// session (rank processes, relays, controller on loopback): the actions are
// stamped with rounds, the drafted file replays beside the live session
// (paused, then resumed with its interval, its records kept) and is
// recorded as a trace whose picture names a decisive unit.
import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseRepro } from '@shared/repro';
import { TopologySession } from './topology-session';
import { LabHost } from './lab-host';

const dirs: string[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-host-repro-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function until(cond: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await cond())) await new Promise((r) => setTimeout(r, 20));
}

describe('LabHost reproductions', () => {
  it(
    'records kill + latency, drafts, saves, replays beside the live session and keeps it',
    { timeout: 240_000 },
    async () => {
      const tracesDir = tempDir();
      const session = new TopologySession({});
      const host = new LabHost(session, { tracesDir, workDir: tempDir() });
      try {
        expect(
          await host.command({
            type: 'start',
            config: { ranksPerHost: [2, 2], modelBytes: 32 * 1024, rounds: 0, roundIntervalMs: 150, seed: 5 },
          }),
        ).toMatchObject({ ok: true });
        const rec = await host.command({ type: 'reproRecord', on: true });
        expect(rec).toMatchObject({ ok: true, recording: { on: true, actions: 0 } });
        await until(() => session.snapshot().roundsCompleted >= 2);
        expect(await host.command({ type: 'killRank', rank: 1 })).toMatchObject({ ok: true });
        await until(() => session.snapshot().ranks[1]!.state === 'dead');
        const r0 = session.snapshot().roundsCompleted;
        await until(() => session.snapshot().roundsCompleted >= r0 + 1);
        expect(
          await host.command({
            type: 'setLinkFault',
            link: 'h1.uplink.data',
            fault: { dir: 'up', latencyMs: 20 },
          }),
        ).toMatchObject({ ok: true });
        const r1 = session.snapshot().roundsCompleted;
        await until(() => session.snapshot().roundsCompleted >= r1 + 2);

        // The state query never turns Record on or off.
        expect(await host.command({ type: 'reproRecord' })).toMatchObject({
          ok: true,
          recording: { on: true, actions: 2 },
        });
        const draft = await host.command({ type: 'draftRepro' });
        if (!draft.ok) throw new Error(draft.message);
        expect(draft.recording.actions).toBe(2);
        const repro = parseRepro(draft.text);
        expect(repro.schedule.map((a) => a.action)).toEqual(['kill-rank', 'link-fault']);
        expect(repro.expectations.dead).toEqual([1]);
        expect(repro.topology.saltHex).toMatch(/^[0-9a-f]{32}$/);

        const saved = await host.command({ type: 'saveRepro', text: draft.text });
        if (!saved.ok) throw new Error(saved.message);
        expect(fs.readFileSync(saved.file.path, 'utf8')).toBe(draft.text);
        const bad = await host.command({
          type: 'saveRepro',
          text: draft.text.replace('"rank": 1', '"rank": 9'),
        });
        expect(bad).toMatchObject({ ok: false, error: 'RANK_OUT_OF_RANGE' });

        const before = session.snapshot();
        const run = await host.command({ type: 'runRepro', text: draft.text });
        if (!run.ok) throw new Error(run.message);
        expect(run.run.dead).toEqual([1]);
        expect(run.run.picture.trace).toMatch(/\.trace\.ndjson$/);
        expect(fs.existsSync(path.join(tracesDir, run.run.picture.trace!))).toBe(true);
        expect(run.run.picture.records).toBeGreaterThan(0);
        expect(run.run.picture.decisive).toBeDefined();
        expect(run.run.picture.marks.map((m) => m.label).join()).toMatch(/kill-rank 1/);
        // The replay's consensus equals the live rounds' wherever the live round's verdict was ok.
        const failed = run.run.results.filter((x) => !x.ok);
        expect(failed, JSON.stringify(failed)).toEqual([]);

        // The live session is still there, running at its interval.
        const after = session.snapshot();
        expect(after.running).toBe(true);
        expect(after.roundsPaused).toBe(false);
        expect(after.config.roundIntervalMs).toBe(150);
        expect(after.startedAt).toBe(before.startedAt);
        await until(() => session.snapshot().roundsCompleted > after.roundsCompleted);
      } finally {
        await host.shutdown();
      }
    },
  );
});
