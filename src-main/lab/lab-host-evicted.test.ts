// Units the tap has let go stay inspectable (issue 30, item 2): the lab host
// reads them back from the session's recording on disk, the first ones (the
// channel magics, handshakes, Hello) included, byte for byte what the trace
// holds, and pages the list's earlier rows from it.
import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LabBatch } from '@shared/lab/contract';
import { TopologySession } from './topology-session';
import { LabHost } from './lab-host';
import { loadTraceFile } from './trace/ndjson';
import type { RecordEvent } from './trace/format';

const dirs: string[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-evicted-test-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
}

describe('units the tap let go', () => {
  it(
    'are read back from the recording, bytes and record, and listed page by page',
    { timeout: 90_000 },
    async () => {
      // A tap that holds 60 records and 20 kB of bytes: every early unit has left it by the end.
      const session = new TopologySession({ tapLimits: { maxRecords: 60, captureBudget: 20_000 } });
      const host = new LabHost(session, { tracesDir: tempDir(), workDir: tempDir() });
      const seen: LabBatch[] = [];
      host.subscribe((b) => seen.push(b));
      try {
        const started = await host.command({
          type: 'start',
          config: { ranksPerHost: [2, 1], modelBytes: 16 * 1024, rounds: 8, roundIntervalMs: 0 },
        });
        expect(started).toMatchObject({ ok: true });
        await session.finished();
        await until(() => seen.flatMap((b) => b.events).filter((e) => e.type === 'round').length >= 8);
        const count = session.activeCluster!.tap.recordCount;
        expect(count).toBeGreaterThan(200);

        // What the recording holds, read whole (the reference).
        const saved = await host.command({ type: 'saveTrace', format: 'ndjson' });
        if (!saved.ok) throw new Error(saved.message);
        const trace = await loadTraceFile(saved.trace.path);
        const bySeq = new Map<number, RecordEvent>();
        for (const e of trace.events) if (e.type === 'record') bySeq.set(e.record.seq, e);
        expect(bySeq.size).toBe(count);

        for (const seq of [0, 1, 2, 3, 63, 64, 65, 130, count - 40]) {
          const reply = await host.command({ type: 'getRecordBytes', seq });
          if (!reply.ok) throw new Error(`seq ${seq}: ${reply.error}: ${reply.message}`);
          const want = bySeq.get(seq)!;
          expect(reply.record).toEqual(want.record);
          expect(reply.bytes.captured).toBe(want.record.captured);
          expect(reply.bytes.hex).toBe(Buffer.from(want.bytes).toString('hex'));
          expect(reply.bytes.saltHex).toBe(trace.header.saltHex);
        }
        // The session's first units are its connections' openings, whole.
        const first = await host.command({ type: 'getRecordBytes', seq: 0 });
        expect(first.ok && ['channelMagic', 'handshake'].includes(first.record!.layer)).toBe(true);
        expect(first.ok && first.bytes.captured).toBe(first.ok && first.record!.length);
        // A seq the session never had is a named error.
        expect(await host.command({ type: 'getRecordBytes', seq: count + 1000 })).toMatchObject({
          ok: false,
          error: 'NOT_FOUND',
        });

        // The list's earlier rows: the newest `limit` before `before`, oldest first.
        const page = await host.command({ type: 'earlierRecords', before: 150, limit: 100 });
        if (!page.ok) throw new Error(page.message);
        expect(page.records.map((r) => r.seq)).toEqual(Array.from({ length: 100 }, (_, i) => 50 + i));
        expect(page.records[7]).toEqual(bySeq.get(57)!.record);
        const head = await host.command({ type: 'earlierRecords', before: 10 });
        expect(head.ok && head.records.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        expect(await host.command({ type: 'earlierRecords', before: 0 })).toEqual({ ok: true, records: [] });
      } finally {
        await host.shutdown();
      }
    },
  );

  it(
    "keeps the snap length the start's config names, and says so in the trace",
    { timeout: 60_000 },
    async () => {
      const session = new TopologySession();
      const host = new LabHost(session, { tracesDir: tempDir(), workDir: tempDir() });
      try {
        const started = await host.command({
          type: 'start',
          config: { ranksPerHost: [2], modelBytes: 16 * 1024, rounds: 2, roundIntervalMs: 0, snapLen: 128 },
        });
        expect(started).toMatchObject({ ok: true });
        await session.finished();
        const tap = session.activeCluster!.tap;
        expect(tap.snapLen).toBe(128);
        const frame = tap.heldRecords.find((r) => r.kind === 'HostFrame')!;
        expect(frame.length).toBeGreaterThan(16 * 1024);
        expect(frame.captured).toBe(128);
        const snap = await host.command({ type: 'snapshot' });
        expect(snap.ok && snap.snapshot.config.snapLen).toBe(128);
        const saved = await host.command({ type: 'saveTrace', format: 'ndjson' });
        if (!saved.ok) throw new Error(saved.message);
        expect((await loadTraceFile(saved.trace.path)).header.snapLen).toBe(128);
      } finally {
        await host.shutdown();
      }
    },
  );
});
