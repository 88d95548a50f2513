// The job's trace as its watch server serves it (jobTrace): a real
// TraceWriter writing a file in batches, cut while lines are still batched
// (the file on disk then ends short of the count, mid-line or not), served
// in pieces; the copy is whole records plus the end line, a complete trace.
// A closed trace is served as the file is. Bad requests get named errors,
// and the only way in is the watch server's token-checked WebSocket.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import type { JobTraceChunk, LabApi } from '@shared/lab/contract';
import { DEFAULT_TOPOLOGY } from '@shared/lab/topology';
import { atomicWriteStream } from '../files/atomic-write';
import { loadTrace, makeTraceHeader, TraceWriter } from '../lab/trace/ndjson';
import { JobTrace } from './job-trace';
import { startWatchServer, watchApi } from './watch-server';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function liveTrace() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-job-trace-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'trace.ndjson');
  const out = atomicWriteStream(file);
  const header = makeTraceHeader({
    startedAt: 0,
    saltHex: '00'.repeat(16),
    config: DEFAULT_TOPOLOGY,
    links: [],
  });
  const writer = new TraceWriter(out, header);
  return { writer, writingTo: out.writingTo, file };
}

function log(writer: TraceWriter, n: number, from: number, size = 40): void {
  for (let i = 0; i < n; i++)
    writer.write({ type: 'log', t: from + i, level: 'info', message: `line ${from + i} `.padEnd(size, 'x') });
}

/** Every piece of one save, as the window asks for them: the bytes and the first piece's close. */
async function fetchAll(trace: JobTrace): Promise<{ bytes: Buffer; first: JobTraceChunk; pieces: number }> {
  const first = await trace.read(0);
  const parts = [Buffer.from(first.data, 'base64')];
  let offset = parts[0]!.length;
  while (offset < first.until) {
    const c = await trace.read(offset, first.until);
    parts.push(Buffer.from(c.data, 'base64'));
    offset += parts.at(-1)!.length;
  }
  return { bytes: Buffer.concat(parts), first, pieces: parts.length };
}

describe("a job's trace served while it is written", () => {
  it('a cut while lines are still batched serves whole records only, a complete trace with its end line', async () => {
    const live = liveTrace();
    const trace = new JobTrace(8 * 1024);
    trace.bind(live);
    log(live.writer, 500, 0);
    await live.writer.flushed();
    // Lines the writer still holds in its batch, and one bigger than a batch (written in parts).
    log(live.writer, 300, 500);
    log(live.writer, 1, 800, 300 * 1024);
    log(live.writer, 10, 801);
    const at = live.writer.position();
    // What the file holds now ends short of what was written: served from the disk as it stands,
    // a copy would be cut mid-way.
    expect(fs.statSync(live.writingTo).size).toBeLessThan(at.bytes);
    const { bytes, first, pieces } = await fetchAll(trace);
    expect(first.until).toBe(at.bytes);
    expect(pieces).toBeGreaterThan(10);
    expect(bytes[bytes.length - 1]).toBe(0x0a);
    expect(first.records).toBe(0);
    const copy = await loadTrace([bytes, Buffer.from(first.endLine!)]);
    expect(copy.complete).toBe(true);
    expect(copy.truncatedTail).toBe(false);
    expect(copy.events).toHaveLength(812);
    expect(copy.events.at(-1)).toEqual({ type: 'end', t: 810, records: 0, events: 811 });
    // The writer goes on; the next save cuts further on, and the first's bytes are its prefix.
    log(live.writer, 50, 811);
    const next = await fetchAll(trace);
    expect(next.first.until).toBeGreaterThan(first.until);
    expect(next.bytes.subarray(0, bytes.length).equals(bytes)).toBe(true);
    await live.writer.close();
  });

  it('a closed trace is served as the job wrote it, end line and all', async () => {
    const live = liveTrace();
    const trace = new JobTrace(4096);
    trace.bind(live);
    log(live.writer, 200, 0);
    await live.writer.flushed();
    // Opened while written (under its temporary name); read on after the close renames it.
    await trace.read(0);
    await live.writer.close(999);
    const { bytes, first } = await fetchAll(trace);
    expect(first.endLine).toBe('');
    expect(bytes.equals(fs.readFileSync(live.file))).toBe(true);
    expect((await loadTrace([bytes])).events.at(-1)).toMatchObject({ type: 'end', t: 999 });
    // A trace first asked for after its close is read under its own name.
    const late = new JobTrace();
    late.bind(live);
    expect((await fetchAll(late)).bytes.equals(bytes)).toBe(true);
  });

  it('bad requests get named errors', async () => {
    const trace = new JobTrace(4096);
    expect(await trace.command({ type: 'jobTrace', offset: 0 })).toMatchObject({
      ok: false,
      error: 'NO_TRACE',
    });
    const live = liveTrace();
    trace.bind(live);
    log(live.writer, 100, 0);
    const first = await trace.read(0);
    // Past what was served: bytes not yet known to be whole are never read.
    expect(await trace.command({ type: 'jobTrace', offset: 0, until: first.until + 1 })).toMatchObject({
      ok: false,
      error: 'BAD_RANGE',
    });
    await trace.close();
    expect(await trace.command({ type: 'jobTrace', offset: 0 })).toMatchObject({
      ok: false,
      error: 'NOT_CONNECTED',
    });
    await live.writer.close();
  });

  it('reached only through the watch server with the token; a file cannot be named', async () => {
    const live = liveTrace();
    const trace = new JobTrace();
    trace.bind(live);
    log(live.writer, 10, 0);
    const lab = { subscribe: () => () => {}, command: async () => ({ ok: false, error: 'X', message: 'x' }) };
    const server = await startWatchServer(watchApi(lab as unknown as LabApi, trace));
    cleanups.push(() => server.close());
    const url = `ws://127.0.0.1:${server.port}/watch`;
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(url);
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('error', () => {});
    });
    expect(refused).toBe(403);
    const ws = new WebSocket(`${url}?token=${server.token}`);
    cleanups.push(() => ws.terminate());
    await new Promise((resolve) => ws.once('open', resolve));
    const replies = new Map<number, unknown>();
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString()) as { type: string; id: number; reply: unknown };
      if (m.type === 'reply') replies.set(m.id, m.reply);
    });
    const ask = async (id: number, command: unknown) => {
      ws.send(JSON.stringify({ id, command }));
      await expect.poll(() => replies.has(id)).toBe(true);
      return replies.get(id) as { ok: boolean; error?: string; chunk?: JobTraceChunk };
    };
    const ok = await ask(1, { type: 'jobTrace', offset: 0 });
    expect(ok.ok).toBe(true);
    expect(Buffer.from(ok.chunk!.data, 'base64').toString()).toContain('"relay-lab-trace"');
    expect(await ask(2, { type: 'jobTrace', offset: 0, path: '/etc/passwd' })).toMatchObject({
      ok: false,
      error: 'BAD_COMMAND',
    });
    expect(await ask(3, { type: 'jobTrace', offset: 5 })).toMatchObject({ ok: false, error: 'BAD_COMMAND' });
    expect(await ask(4, { type: 'jobTrace', offset: -1, until: 3 })).toMatchObject({
      ok: false,
      error: 'BAD_COMMAND',
    });
    await live.writer.close();
  });
});
