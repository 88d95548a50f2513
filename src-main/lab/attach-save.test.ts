// Save trace while attached to a job, over real sockets: a job's engine (the
// run `relay-lab slurm task` runs, real rank processes, its --trace written
// in batches) behind its watch server (JobWatch, as task 0 serves it), the
// window's side through AttachRouter saving where a local save goes (a
// LabHost's traces folder). A save mid-run is a complete trace that is the
// job's trace.ndjson byte for byte up to a record's end, then an end line; a
// save after the run is the job's file exactly, its rounds and units those
// of the job's report. A link dropped mid-save leaves no file, and a link
// that is down or a job that ended is answered in words, never with a file.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LabBatch, LabView } from '@shared/lab/contract';
import type { AttachRouter } from './attach-router';
import { loadTraceFile } from './trace/ndjson';
import { onCleanup, startJob, useCleanups, windowRouter, type Job } from './testing/attached-job';
import type { RecordEvent, RoundEvent } from './trace/format';

useCleanups();

/** A job's first task without Slurm: its run (2 hosts x 2 ranks, rounds until ended) and its watch server. */
const job = (tracePiece: number): Promise<Job> => startJob({ tracePiece });

/** The window: a router in front of a lab that answers snapshot only, saving into a LabHost's traces folder. */
function window(): { router: AttachRouter; tracesDir: string; rounds: () => number; views: LabView[] } {
  const { router, tracesDir } = windowRouter();
  let rounds = 0;
  const views: LabView[] = [];
  router.subscribe((b: LabBatch) => {
    for (const e of b.events) {
      if (e.type === 'round') rounds++;
      if (e.type === 'view') views.push(e.view);
    }
  });
  return { router, tracesDir, rounds: () => rounds, views };
}

async function save(router: AttachRouter, format: 'ndjson' | 'pcapng' = 'ndjson') {
  const reply = await router.command({ type: 'saveTrace', format });
  if (!reply.ok) throw new Error(`${reply.error}: ${reply.message}`);
  return reply.trace;
}

/** A loopback TCP proxy to `port` that can be cut (its connections dropped, no new ones taken). */
async function proxy(port: number): Promise<{ port: number; cutAfterReplies: (n: number) => void }> {
  const sockets = new Set<net.Socket>();
  let replies = 0;
  let cutAt = Infinity;
  let tail = '';
  const server = net.createServer((client) => {
    const up = net.connect(port, '127.0.0.1');
    sockets.add(client).add(up);
    client.on('data', (d) => up.write(d));
    up.on('data', (d) => {
      // Server-to-client WebSocket frames are not masked: a jobTrace reply reads as it was sent.
      const text = tail + d.toString('latin1');
      replies += text.split('"chunk":').length - 1;
      tail = text.slice(-16);
      if (replies >= cutAt) {
        server.close();
        for (const s of sockets) s.destroy();
        return;
      }
      client.write(d);
    });
    for (const s of [client, up])
      s.on('error', () => {}).on('close', () => sockets.forEach((x) => x.destroy()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  onCleanup(() => {
    server.close();
    for (const s of sockets) s.destroy();
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    cutAfterReplies: (n) => (cutAt = replies + n),
  };
}

const records = (events: { type: string }[]) => events.filter((e): e is RecordEvent => e.type === 'record');
const roundsOf = (events: { type: string }[]) =>
  events.filter((e): e is RoundEvent => e.type === 'round').map((e) => e.report);

describe('Save trace while attached to a job', () => {
  it("saves the job's trace so far, then the whole of it, as the job wrote it", async () => {
    // 64 KiB pieces: a save is many requests, as a long job's is.
    const j = await job(64 * 1024);
    const w = window();
    expect(
      (await w.router.command({ type: 'attach', address: `127.0.0.1:${j.watch.port}`, token: j.watch.token }))
        .ok,
    ).toBe(true);
    await expect.poll(() => w.rounds(), { timeout: 60_000 }).toBeGreaterThan(5);

    // Mid-run: a complete trace (its end line), whole records, the job's bytes up to its cut.
    const mid = await save(w.router);
    expect(path.dirname(mid.path)).toBe(w.tracesDir);
    const midTrace = await loadTraceFile(mid.path);
    expect(midTrace.complete).toBe(true);
    expect(midTrace.truncatedTail).toBe(false);
    expect(records(midTrace.events)).toHaveLength(mid.records);
    expect(records(midTrace.events).map((e) => e.record.seq)).toEqual([...Array(mid.records).keys()]);
    expect(mid.bytes).toBeGreaterThan(64 * 1024);
    const midRounds = roundsOf(midTrace.events);
    expect(midRounds.length).toBeGreaterThan(0);

    // A pcapng is exported from the same bytes, as a local session's is.
    const pcap = await save(w.router, 'pcapng');
    expect(pcap.name).toMatch(/\.pcapng$/);
    expect(pcap.records).toBeGreaterThanOrEqual(mid.records);

    const report = await j.end();
    const jobBytes = fs.readFileSync(j.trace);
    const midBytes = fs.readFileSync(mid.path);
    const midEnd = midBytes.lastIndexOf('\n', midBytes.length - 2) + 1;
    // Byte for byte the job's trace up to a record's end; the end line is the one a close there writes.
    expect(jobBytes.subarray(0, midEnd).equals(midBytes.subarray(0, midEnd))).toBe(true);
    expect(JSON.parse(midBytes.subarray(midEnd).toString())).toMatchObject({
      type: 'end',
      records: mid.records,
    });
    // Its rounds are the job's first rounds.
    expect(midRounds).toEqual(report.rounds.slice(0, midRounds.length));

    // After the run (the watch server still up): the job's closed trace, exactly.
    const whole = await save(w.router);
    expect(fs.readFileSync(whole.path).equals(jobBytes)).toBe(true);
    const wholeTrace = await loadTraceFile(whole.path);
    expect(wholeTrace.complete).toBe(true);
    // Rounds and units are the report's: every round, every link's units.
    expect(roundsOf(wholeTrace.events)).toEqual(report.rounds);
    expect(report.rounds.length).toBeGreaterThan(5);
    const units = new Map<string, number>();
    for (const e of records(wholeTrace.events)) units.set(e.record.link, (units.get(e.record.link) ?? 0) + 1);
    for (const l of report.links) expect([l.id, units.get(l.id) ?? 0]).toEqual([l.id, l.units]);
    expect(whole.records).toBe(records(wholeTrace.events).length);

    // The job ends: nothing is fetched, and the reply says where its trace is.
    await j.watch.close();
    await expect.poll(() => w.views.at(-1), { timeout: 10_000 }).toMatchObject({ state: 'ended' });
    const after = await w.router.command({ type: 'saveTrace', format: 'ndjson' });
    expect(after).toMatchObject({ ok: false, error: 'NOT_CONNECTED' });
    expect(after.ok ? '' : after.message).toMatch(
      /has ended: its whole trace is trace\.ndjson in the job's folder/,
    );
  }, 120_000);

  it('a link dropped mid-save leaves no file; while it is down the save says why', async () => {
    const j = await job(4096);
    const p = await proxy(j.watch.port);
    const w = window();
    // The job's pieces reach the window through Save trace only, never a renderer's command.
    expect(await w.router.command({ type: 'jobTrace', offset: 0 })).toMatchObject({
      ok: false,
      error: 'NOT_SUPPORTED',
    });
    expect(
      (await w.router.command({ type: 'attach', address: `127.0.0.1:${p.port}`, token: j.watch.token })).ok,
    ).toBe(true);
    await expect.poll(() => w.rounds(), { timeout: 60_000 }).toBeGreaterThan(5);
    // The link goes after the third piece of a save that needs many more.
    p.cutAfterReplies(3);
    const dropped = await w.router.command({ type: 'saveTrace', format: 'ndjson' });
    expect(dropped).toMatchObject({ ok: false, error: 'NOT_CONNECTED' });
    expect(dropped.ok ? '' : dropped.message).toMatch(
      /the save stopped at byte \d+ of \d+ .*nothing was written/,
    );
    // Nothing at all in the traces folder: no partial file, no temporary one.
    expect(fs.readdirSync(w.tracesDir)).toEqual([]);
    await expect.poll(() => w.views.at(-1), { timeout: 10_000 }).toMatchObject({ state: 'lost' });
    const down = await w.router.command({ type: 'saveTrace', format: 'ndjson' });
    expect(down).toMatchObject({ ok: false, error: 'NOT_CONNECTED' });
    expect(down.ok ? '' : down.message).toMatch(
      /is down since \d\d:\d\d:\d\d \(reconnecting\).*this window keeps no copy; save again once it is live/,
    );
    expect(fs.readdirSync(w.tracesDir)).toEqual([]);
    // The job itself went on: its own trace is whole at its end.
    const report = await j.end();
    const jobTrace = await loadTraceFile(j.trace);
    expect(jobTrace.complete).toBe(true);
    expect(roundsOf(jobTrace.events)).toEqual(report.rounds);
  }, 120_000);
});
