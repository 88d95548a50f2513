// The lab host on a real session: rank processes, relays and the controller
// on loopback sockets, recorded from the start, saved from the running
// session, opened again, scrubbed, and exported to a pcapng that tshark reads.
import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LabBatch, LabEvent } from '@shared/lab/contract';
import type { UnitRecord } from '@shared/lab/records';
import { TopologySession } from './topology-session';
import { LabHost } from './lab-host';
import { loadTraceFile } from './trace/ndjson';
import { TSHARK_REQUIRED, tsharkAvailable, tsharkFields } from './trace/testing/tshark';

const dirs: string[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-host-test-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const ROUNDS = 3;

/** Waits for the session's batched events (they are flushed on a timer after the rounds end). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
}

describe('LabHost on a real session', () => {
  it(
    'saves the running session, opens it, seeks, and serves the same records and bytes',
    { timeout: 90_000 },
    async () => {
      const tracesDir = tempDir();
      const session = new TopologySession({});
      const host = new LabHost(session, {
        tracesDir,
        workDir: tempDir(),
        downloadUrl: (n) => `/traces/${n}`,
      });
      const seen: LabBatch[] = [];
      host.subscribe((b) => seen.push(b));
      try {
        const started = await host.command({
          type: 'start',
          config: { ranksPerHost: [2, 1], modelBytes: 64 * 1024, rounds: ROUNDS, roundIntervalMs: 0 },
        });
        expect(started).toMatchObject({ ok: true });
        await session.finished();
        await until(() => seen.flatMap((b) => b.events).filter((e) => e.type === 'round').length >= ROUNDS);
        // A kill while recording becomes a lifecycle mark on the timeline.
        expect(await host.command({ type: 'killRank', rank: 2 })).toMatchObject({ ok: true });
        await until(() => seen.flatMap((b) => b.events).some((e) => e.type === 'finding'));
        // The live session learns of the death when the process's exit is reported: save after that.
        for (;;) {
          const s = await host.command({ type: 'snapshot' });
          if (s.ok && s.snapshot!.ranks[2]!.state !== 'alive') break;
          await new Promise((r) => setTimeout(r, 10));
        }

        // Live catch-up: the tap's recent records, in seq order.
        const recent = await host.command({ type: 'recentRecords', limit: 10_000 });
        if (!recent.ok) throw new Error(recent.message);
        const liveRecords = recent.records!;
        expect(liveRecords.length).toBeGreaterThan(0);
        expect(liveRecords.map((r) => r.seq)).toEqual(liveRecords.map((_, i) => liveRecords[0]!.seq + i));
        expect(recent.view).toEqual({ kind: 'live' });
        // ...and the rounds and findings so far, so a reconnecting window redraws its charts and findings.
        expect(recent.history!.filter((e) => e.type === 'round').length).toBe(ROUNDS);
        expect(recent.history!.some((e) => e.type === 'finding')).toBe(true);

        const liveAtSave = await host.command({ type: 'snapshot' });
        const saved = await host.command({ type: 'saveTrace', format: 'ndjson' });
        if (!saved.ok) throw new Error(saved.message);
        const file = saved.trace!;
        expect(path.dirname(file.path)).toBe(tracesDir);
        expect(file.download).toBe(`/traces/${file.name}`);

        // The saved copy is a complete trace (it ends with an end line) holding every record the tap saw.
        const loaded = await loadTraceFile(file.path);
        expect(loaded.complete).toBe(true);
        const savedRecords = loaded.events.filter((e) => e.type === 'record');
        expect(savedRecords.length).toBe(file.records);
        expect(savedRecords.map((e) => e.record.seq)).toEqual(savedRecords.map((_, i) => i));
        expect(loaded.events.filter((e) => e.type === 'round').length).toBe(ROUNDS);
        expect(
          loaded.events.some((e) => e.type === 'lifecycle' && e.action === 'killRank' && e.rank === 2),
        ).toBe(true);
        expect(host.listTraces().map((t) => t.name)).toEqual([file.name]);

        // Bytes while live, to compare with the same record read from the trace.
        const hostFrame = liveRecords.find((r) => r.kind === 'HostFrame')!;
        expect(hostFrame).toBeDefined();
        const liveBytes = await host.command({ type: 'getRecordBytes', seq: hostFrame.seq });
        if (!liveBytes.ok) throw new Error(liveBytes.message);

        // Open it: the window gets a resetting batch with the trace view at its end.
        seen.length = 0;
        const opened = await host.command({ type: 'openTrace', name: file.name });
        if (!opened.ok) throw new Error(opened.message);
        expect(opened.view).toMatchObject({ kind: 'trace', name: file.name, complete: true });
        const view = opened.view as Extract<LabEvent, { type: 'view' }>['view'] & { kind: 'trace' };
        expect(view.marks.map((m) => m.label)).toContain('killRank rank 2');
        // (A live batch may have gone out while the file loaded; the trace's batch starts with its view.)
        const first = seen.find((b) => b.events[0]?.type === 'view')!.events;
        expect(first[0]).toMatchObject({ type: 'view' });
        expect(first[1]).toMatchObject({ type: 'snapshot', reset: true });
        const replayed = first.flatMap((e) => (e.type === 'records' ? e.records : []));
        expect(replayed.length).toBe(file.records);
        const bySeq = new Map<number, UnitRecord>(replayed.map((r) => [r.seq, r]));
        for (const r of liveRecords.filter((x) => x.seq < file.records)) expect(bySeq.get(r.seq)).toEqual(r);

        const traceBytes = await host.command({ type: 'getRecordBytes', seq: hostFrame.seq });
        if (!traceBytes.ok) throw new Error(traceBytes.message);
        expect(traceBytes.bytes).toEqual(liveBytes.bytes);

        // Seek to the middle: only the records up to then, a snapshot from then, and the rank not yet dead.
        const killT = view.marks.find((m) => m.action === 'killRank')!.t;
        seen.length = 0;
        const mid = await host.command({ type: 'seekTrace', t: killT - 0.001 });
        expect(mid).toMatchObject({ ok: true, view: { kind: 'trace', t: killT - 0.001 } });
        const batch = seen[0]!.events;
        const snap = batch.find((e) => e.type === 'snapshot');
        expect(snap).toMatchObject({ reset: true });
        if (snap?.type !== 'snapshot') throw new Error('no snapshot');
        expect(snap.snapshot.ranks[2]!.state).not.toBe('dead');
        const midRecords = batch.flatMap((e) => (e.type === 'records' ? e.records : []));
        expect(midRecords.every((r) => r.t <= killT)).toBe(true);
        expect(midRecords.length).toBe(savedRecords.filter((e) => e.t < killT).length);
        await host.command({ type: 'seekTrace', t: view.duration });
        const after = await host.command({ type: 'snapshot' });
        // At its end the trace shows the ranks as the live session did when it was saved.
        expect(after.ok && after.snapshot!.ranks.map((r) => r.state)).toEqual(
          liveAtSave.ok && liveAtSave.snapshot!.ranks.map((r) => r.state),
        );
        expect(after.ok && after.snapshot!.ranks[2]!.state).not.toBe('alive');

        // While a trace is open, topology commands answer OFFLINE; closing returns to the live session.
        expect(await host.command({ type: 'killRank', rank: 0 })).toMatchObject({
          ok: false,
          error: 'OFFLINE',
        });
        seen.length = 0;
        expect(await host.command({ type: 'closeTrace' })).toMatchObject({
          ok: true,
          view: { kind: 'live' },
        });
        expect(seen[0]!.events[0]).toEqual({ type: 'view', view: { kind: 'live' } });
        expect(seen[0]!.events.filter((e) => e.type === 'round').length).toBe(ROUNDS);
        const live = await host.command({ type: 'snapshot' });
        // The same session again (its start time; the trace's is the tap's origin, within a few ms of it).
        expect(live.ok && Math.abs(live.snapshot!.startedAt - loaded.header.startedAt)).toBeLessThan(50);
        expect(live.ok && live.snapshot!.running).toBe(true);
      } finally {
        await host.shutdown();
      }
    },
  );

  it('exports the running session as a pcapng that tshark decodes', { timeout: 90_000 }, async () => {
    const tracesDir = tempDir();
    const session = new TopologySession({});
    const host = new LabHost(session, { tracesDir, workDir: tempDir() });
    try {
      await host.command({
        type: 'start',
        config: { ranksPerHost: [2], modelBytes: 32 * 1024, rounds: 2, roundIntervalMs: 0 },
      });
      await session.finished();
      const saved = await host.command({ type: 'saveTrace', format: 'pcapng' });
      if (!saved.ok) throw new Error(saved.message);
      expect(saved.trace!.name).toMatch(/\.pcapng$/);
      expect(saved.trace!.download).toBeUndefined();
      // The intermediate NDJSON copy is not left in the traces folder.
      expect(fs.readdirSync(tracesDir)).toEqual([saved.trace!.name]);
      if (!tsharkAvailable()) {
        if (TSHARK_REQUIRED) throw new Error('tshark not found on PATH (CI=true requires it)');
        console.warn('tshark not installed: skipped reading the exported pcapng');
        return;
      }
      const rows = tsharkFields(saved.trace!.path, [
        'relaylab.unit',
        'relaylab.mux.kind',
        'relaylab.bad_magic',
        'relaylab.length_mismatch',
      ]);
      const units = rows.flatMap((r) => r['relaylab.unit'] ?? []);
      expect(units.length).toBe(saved.trace!.records);
      expect(rows.filter((r) => r['relaylab.bad_magic'] || r['relaylab.length_mismatch'])).toEqual([]);
      // Both ranks' uploads for both rounds are there as mux records of kind 3 (RoundFrame deposits).
      expect(rows.flatMap((r) => r['relaylab.mux.kind'] ?? []).filter((k) => k === '3').length).toBe(2);
    } finally {
      await host.shutdown();
    }
  });

  it(
    'closes the recording at its budget, and a save still gives a complete trace',
    { timeout: 90_000 },
    async () => {
      const session = new TopologySession({});
      const host = new LabHost(session, {
        tracesDir: tempDir(),
        workDir: tempDir(),
        maxRecordingBytes: 64 * 1024,
      });
      const logs: string[] = [];
      host.subscribe((b) => b.events.forEach((e) => e.type === 'log' && logs.push(e.message)));
      try {
        await host.command({
          type: 'start',
          config: { ranksPerHost: [2], modelBytes: 256 * 1024, rounds: 2, roundIntervalMs: 0 },
        });
        await session.finished();
        await until(() => logs.some((m) => m.startsWith('trace recording stopped at')));
        const saved = await host.command({ type: 'saveTrace', format: 'ndjson' });
        if (!saved.ok) throw new Error(saved.message);
        const loaded = await loadTraceFile(saved.trace!.path);
        expect(loaded.complete).toBe(true);
        expect(loaded.events.filter((e) => e.type === 'record').length).toBe(saved.trace!.records);
      } finally {
        await host.shutdown();
      }
    },
  );

  it('names what it cannot do', async () => {
    const host = new LabHost(new TopologySession({}), { tracesDir: tempDir(), workDir: tempDir() });
    expect(await host.command({ type: 'saveTrace', format: 'ndjson' })).toMatchObject({
      ok: false,
      error: 'NO_RECORDING',
    });
    expect(await host.command({ type: 'openTrace', name: 'missing.trace.ndjson' })).toMatchObject({
      ok: false,
      error: 'NOT_FOUND',
    });
    expect(await host.command({ type: 'openTrace' })).toMatchObject({ ok: false, error: 'NOT_SUPPORTED' });
    expect(await host.command({ type: 'seekTrace', t: 1 })).toMatchObject({ ok: false, error: 'NO_TRACE' });
    expect(await host.command({ type: 'recentRecords' })).toMatchObject({ ok: true, records: [] });
    await host.shutdown();
  });
});
