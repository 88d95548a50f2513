// Attaching to a topology that runs elsewhere, over real sockets: a job-like
// lab (a TopologySession with real rank processes behind LabHost) served by
// the watch server, the window's side through AttachRouter. Live rounds
// arrive, a kill acts on the remote session, a wrong token or a dead address
// is refused in words, a commands outside the watch set are refused, a drop
// is announced as lost at once, and the job's end as ended.
import { afterEach, describe, expect, it } from 'vitest';
import type { LabBatch, LabView } from '@shared/lab/contract';
import { DEFAULT_TOPOLOGY } from '@shared/lab/topology';
import { TopologySession } from './topology-session';
import { LabHost } from './lab-host';
import { AttachRouter } from './attach-router';
import { startWatchServer, watchApi, type WatchServer } from '../slurm/watch-server';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A local lab that only answers snapshot (the window's own, behind the attached job). */
const localLab = {
  subscribe: () => () => {},
  command: async (cmd: { type: string }) =>
    cmd.type === 'snapshot'
      ? { ok: true, snapshot: { startedAt: 0 } }
      : { ok: false, error: 'LOCAL', message: `local ${cmd.type}` },
} as never;

async function job(): Promise<{ watch: WatchServer; session: TopologySession }> {
  const session = new TopologySession();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-attach-test-'));
  const host = new LabHost(session, { tracesDir: dir, workDir: path.join(dir, 'work') });
  fs.mkdirSync(path.join(dir, 'work'));
  const watch = await startWatchServer(watchApi(host));
  cleanups.push(async () => {
    await watch.close();
    await session.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const reply = await host.command({
    type: 'start',
    config: { ...DEFAULT_TOPOLOGY, ranksPerHost: [2, 2], modelBytes: 4096, roundIntervalMs: 20 },
  });
  expect(reply.ok).toBe(true);
  return { watch, session };
}

function views(router: AttachRouter): { list: LabView[]; rounds: () => number } {
  const list: LabView[] = [];
  let rounds = 0;
  router.subscribe((b: LabBatch) => {
    for (const e of b.events) {
      if (e.type === 'view') list.push(e.view);
      if (e.type === 'round') rounds++;
    }
  });
  return { list, rounds: () => rounds };
}

describe('attaching the window to a job elsewhere', () => {
  it('live rounds arrive, a kill acts on the job, the job end reads as ended', async () => {
    const { watch, session } = await job();
    const router = new AttachRouter(localLab);
    const seen = views(router);
    const address = `127.0.0.1:${watch.port}`;
    const reply = await router.command({ type: 'attach', address, token: watch.token });
    expect(reply.ok).toBe(true);
    expect(seen.list.at(-1)).toMatchObject({ kind: 'attached', address, state: 'live' });
    await expect.poll(() => seen.rounds(), { timeout: 30_000 }).toBeGreaterThan(2);
    // Starting or stopping the job's topology is not the watcher's to do.
    const start = await router.command({ type: 'start' });
    expect(start).toMatchObject({ ok: false, error: 'NOT_IN_A_JOB' });
    expect((await router.command({ type: 'killRank', rank: 3 })).ok).toBe(true);
    await expect
      .poll(
        async () => {
          const s = await router.command({ type: 'snapshot' });
          return s.ok ? s.snapshot.ranks.find((r) => r.rank === 3)?.state : null;
        },
        { timeout: 30_000 },
      )
      .toBe('dead');
    expect(session.activeCluster?.ranks[3].exited).toBe(true);
    await watch.close();
    await expect
      .poll(() => seen.list.at(-1), { timeout: 10_000 })
      .toMatchObject({ kind: 'attached', state: 'ended' });
    const after = await router.command({ type: 'killRank', rank: 2 });
    expect(after).toMatchObject({ ok: false, error: 'NOT_CONNECTED' });
    await router.command({ type: 'detach' });
    expect(seen.list.at(-1)).toEqual({ kind: 'live' });
  }, 60_000);

  it('a wrong token and an address where nothing answers are refused in words', async () => {
    const { watch } = await job();
    const router = new AttachRouter(localLab);
    const wrong = await router.command({
      type: 'attach',
      address: `127.0.0.1:${watch.port}`,
      token: 'x'.repeat(32),
    });
    expect(wrong).toMatchObject({ ok: false, error: 'ATTACH_FAILED' });
    expect(wrong.ok ? '' : wrong.message).toMatch(/refused the token/);
    await watch.close();
    const none = await router.command({
      type: 'attach',
      address: `127.0.0.1:${watch.port}`,
      token: watch.token,
    });
    expect(none.ok ? '' : none.message).toMatch(/nothing answers/);
    // Not attached: commands go to the local lab.
    expect(await router.command({ type: 'killRank', rank: 0 })).toMatchObject({ error: 'LOCAL' });
  }, 60_000);
});
