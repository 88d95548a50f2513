import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { TraceError } from './errors';
import type { TraceEvent } from './format';
import { loadTrace, readTrace, readTraceFile, TraceWriter } from './ndjson';
import { decodeEventLine, encodeEventLine, encodeHeaderLine } from './ndjson-codec';
import { sampleEvents, sampleHeader } from './testing/sample-session';

/** Feeds text to the reader in chunks of `size` bytes (UTF-8 sequences get cut too). */
async function* chunked(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function writeSample(): Promise<string> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const w = new TraceWriter(out, sampleHeader());
  for (const e of sampleEvents()) if (e.type !== 'end') w.write(e);
  await w.close();
  return Buffer.concat(chunks).toString('utf8');
}

async function errorOf(text: string): Promise<TraceError> {
  try {
    await loadTrace(chunked(text, 64));
  } catch (e) {
    if (e instanceof TraceError) return e;
    throw e;
  }
  throw new Error('expected a TraceError');
}

const headerLine = encodeHeaderLine(sampleHeader());

describe('trace NDJSON', () => {
  it('round-trips every event, bytes included, whatever the chunking', async () => {
    const text = await writeSample();
    const events = sampleEvents();
    for (const size of [5, 4096, text.length]) {
      const back = await loadTrace(chunked(text, size));
      expect(back.header).toEqual(sampleHeader());
      expect(back.complete).toBe(true);
      expect(back.truncatedTail).toBe(false);
      const end = back.events.at(-1)!;
      expect(end).toEqual({
        type: 'end',
        t: expect.any(Number),
        records: events.filter((e) => e.type === 'record').length,
        events: events.length,
      });
      // Bytes compare by content (as hex: fast on the model-sized unit).
      const norm = (e: TraceEvent): unknown =>
        e.type === 'record' ? { ...e, bytes: Buffer.from(e.bytes).toString('hex') } : e;
      expect(back.events.slice(0, -1).map(norm)).toEqual(events.map(norm));
    }
  });

  it('round-trips a link declared mid-trace', async () => {
    const link = { ...sampleHeader().links[2]!, id: 'h1.uplink.data', host: 1, clientPort: 47100 };
    const back = await loadTrace([headerLine, encodeEventLine({ type: 'link', t: 3, link })]);
    expect(back.events).toEqual([{ type: 'link', t: 3, link }]);
  });

  it('writes one JSON object per line with the header first', async () => {
    const lines = (await writeSample()).split('\n');
    expect(lines.at(-1)).toBe('');
    const header = JSON.parse(lines[0]!);
    expect(header).toMatchObject({
      format: 'relay-lab-trace',
      version: 1,
      saltHex: '0102030405060708090a0b0c0d0e0f10',
    });
    const firstRecord = JSON.parse(lines.find((l) => l.includes('"type":"record"'))!);
    // The data handshake vector, base64.
    expect(Buffer.from(firstRecord.bytes, 'base64').toString('hex')).toBe('c0170df1030000000000000001000000');
    expect(firstRecord.record).toMatchObject({
      seq: 1,
      link: 'h0.r0.data',
      dir: 'up',
      layer: 'handshake',
      length: 16,
      captured: 16,
    });
  });

  it("writes a record as JSON.stringify would, in parts, and counts the file's bytes exactly", async () => {
    const events = sampleEvents();
    for (const e of events) {
      const expected =
        e.type === 'record'
          ? JSON.stringify({ ...e, bytes: Buffer.from(e.bytes).toString('base64') }) + '\n'
          : JSON.stringify(e) + '\n';
      expect(encodeEventLine(e)).toBe(expected);
    }
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    const w = new TraceWriter(out, sampleHeader());
    for (const e of events) if (e.type !== 'end') w.write(e);
    // The length counts the lines still batched; flushed() hands them to the stream.
    const cut = w.position().bytes;
    await w.flushed();
    const written = Buffer.concat(chunks);
    expect(cut).toBe(written.length);
    expect(written.toString('utf8')).toBe(
      encodeHeaderLine(sampleHeader()) +
        events
          .filter((e) => e.type !== 'end')
          .map(encodeEventLine)
          .join(''),
    );
  });

  it('streams through a real file with backpressure', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-lab-trace-'));
    const path = join(dir, 'session.ndjson');
    const w = TraceWriter.toFile(path, sampleHeader());
    const big = new Uint8Array(1024 * 1024).map((_, i) => i * 7);
    let records = 0;
    for (let i = 0; i < 3; i++) {
      const e = sampleEvents().find((x) => x.type === 'record')!;
      if (
        !w.write({
          ...e,
          record: { ...e.record, seq: 100 + i, length: big.length, captured: big.length },
          bytes: big,
        })
      )
        await w.drained();
      records += 1;
    }
    await w.close();
    let seen = 0;
    for await (const item of readTraceFile(path)) {
      if (item.kind === 'event' && item.event.type === 'record') {
        seen += 1;
        expect(item.event.bytes.length).toBe(big.length);
        expect(Buffer.compare(Buffer.from(item.event.bytes), Buffer.from(big))).toBe(0);
      }
    }
    expect(seen).toBe(records);
  });

  it('keeps the events before a cut last line and reports the cut', async () => {
    const text = await writeSample();
    const lines = text.split('\n');
    // Cut a line in half and drop what follows it, as a writer killed mid-line leaves the file.
    const cutLine = lines[lines.length - 4]!;
    const cut =
      lines.slice(0, lines.length - 4).join('\n') + '\n' + cutLine.slice(0, Math.floor(cutLine.length / 2));
    const back = await loadTrace(chunked(cut, 100));
    expect(back.truncatedTail).toBe(true);
    expect(back.complete).toBe(false);
    expect(back.events.length).toBe(lines.length - 5);
  });

  it('accepts a whole last line without its newline', async () => {
    const text = (await writeSample()).trimEnd();
    const back = await loadTrace(chunked(text, 50));
    expect(back.complete).toBe(true);
    expect(back.truncatedTail).toBe(false);
  });

  it('names malformed lines with their line number', async () => {
    const ok = encodeEventLine({ type: 'log', t: 1, level: 'info', message: 'x' });
    expect(await errorOf(headerLine + ok + '{"type": "log", t: 2}\n' + ok)).toMatchObject({
      code: 'BAD_JSON',
      line: 3,
    });
    expect(await errorOf(headerLine + '{"type":"nope","t":1}\n')).toMatchObject({
      code: 'BAD_EVENT',
      line: 2,
    });
    expect(
      await errorOf(headerLine + '{"type":"log","t":"soon","level":"info","message":"m"}\n'),
    ).toMatchObject({ code: 'BAD_EVENT', line: 2 });
    expect(await errorOf(headerLine + '[1,2]\n')).toMatchObject({ code: 'BAD_EVENT', line: 2 });
    expect(await errorOf(headerLine + '{"type":"lifecycle","t":1,"action":"explode"}\n')).toMatchObject({
      code: 'BAD_EVENT',
    });
    expect(
      await errorOf(headerLine + '{"type":"link","t":1,"link":{"id":"h1.uplink.data"}}\n'),
    ).toMatchObject({ code: 'BAD_EVENT', line: 2 });
  });

  it('rejects record bytes that are not base64 or disagree with captured', async () => {
    const rec = sampleEvents().find((e) => e.type === 'record')!;
    const line = JSON.parse(encodeEventLine(rec));
    expect(
      await errorOf(headerLine + JSON.stringify({ ...line, bytes: 'not base64!' }) + '\n'),
    ).toMatchObject({ code: 'BAD_BYTES', line: 2 });
    expect(await errorOf(headerLine + JSON.stringify({ ...line, bytes: 'AAAA' }) + '\n')).toMatchObject({
      code: 'BAD_BYTES',
      line: 2,
    });
    const over = { ...line, record: { ...line.record, captured: line.record.length + 1 } };
    expect(await errorOf(headerLine + JSON.stringify(over) + '\n')).toMatchObject({
      code: 'BAD_EVENT',
      line: 2,
    });
  });

  it('rejects what is not a trace, a newer version, and an empty input', async () => {
    expect(await errorOf('{"hello":1}\n')).toMatchObject({ code: 'NOT_A_TRACE', line: 1 });
    expect(await errorOf('garbage\n')).toMatchObject({ code: 'NOT_A_TRACE', line: 1 });
    expect(await errorOf(JSON.stringify({ ...sampleHeader(), version: 2 }) + '\n')).toMatchObject({
      code: 'UNSUPPORTED_VERSION',
    });
    expect(await errorOf(JSON.stringify({ ...sampleHeader(), saltHex: 'XYZ' }) + '\n')).toMatchObject({
      code: 'BAD_EVENT',
    });
    const badLink = { ...sampleHeader(), links: [{ ...sampleHeader().links[0], clientPort: 70000 }] };
    expect(await errorOf(JSON.stringify(badLink) + '\n')).toMatchObject({ code: 'BAD_EVENT' });
    expect(await errorOf('')).toMatchObject({ code: 'EMPTY' });
    expect(await errorOf(headerLine.slice(0, 40))).toMatchObject({ code: 'EMPTY' });
  });

  it('refuses an endless line instead of buffering it', async () => {
    const source = chunked(headerLine + 'x'.repeat(5000), 100);
    await expect(async () => {
      for await (const _ of readTrace(source, { maxLineBytes: 1000 })) void _;
    }).rejects.toMatchObject({ code: 'BAD_EVENT' });
  });

  it('reads a trace written by hand from the format document', async () => {
    const doc = readFileSync(new URL('../../../docs/trace-format.md', import.meta.url), 'utf8');
    const example = /```ndjson\n([\s\S]*?)```/.exec(doc)![1]!;
    const back = await loadTrace(chunked(example, 16));
    expect(back.complete).toBe(true);
    const rec = back.events.find((e) => e.type === 'record')!;
    expect(rec.type === 'record' && Buffer.from(rec.bytes).toString('hex')).toBe('e1170df1');
  });
});

describe('TraceWriter on a failing stream', () => {
  it('never throws from write, counts what it dropped, and close rejects with the error', async () => {
    let writes = 0;
    const out = new Writable({
      write(_chunk, _enc, cb) {
        writes += 1;
        // The header and one event get through; then the disk is full.
        cb(writes > 2 ? Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }) : null);
      },
    });
    const w = new TraceWriter(out, sampleHeader());
    const events = sampleEvents().filter((e) => e.type === 'log' || e.type === 'lifecycle');
    for (const e of events) {
      expect(() => w.write(e as Exclude<TraceEvent, { type: 'end' }>)).not.toThrow();
      await new Promise((r) => setImmediate(r));
    }
    await w.drained();
    expect(w.error).toMatchObject({ code: 'ENOSPC' });
    expect(w.dropped).toBeGreaterThan(0);
    await expect(w.close()).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(w.write(events[0] as Exclude<TraceEvent, { type: 'end' }>)).toBe(false);
  });

  it('batches small lines into one stream write per turn of the event loop, in order', async () => {
    const writes: Buffer[] = [];
    const out = new Writable({
      write(chunk: Buffer, _enc, cb) {
        writes.push(chunk);
        cb();
      },
    });
    const w = new TraceWriter(out, sampleHeader());
    const logs = Array.from({ length: 500 }, (_, i) => ({
      type: 'log' as const,
      t: i,
      level: 'info' as const,
      message: `m${i}`,
    }));
    for (const e of logs) w.write(e);
    // The header went at once; the 500 lines wait for the loop's next turn, then go as one chunk.
    expect(writes.length).toBe(1);
    await new Promise((r) => setImmediate(r));
    expect(writes.length).toBe(2);
    const big = new Uint8Array(400 * 1024).map((_, i) => i & 0xff);
    const rec = sampleEvents().find((x) => x.type === 'record')!;
    w.write(logs[0]);
    // A line bigger than the batch: what was batched goes first, then the big line's parts.
    w.write({ ...rec, bytes: big, record: { ...rec.record, length: big.length, captured: big.length } });
    await w.close();
    const text = Buffer.concat(writes).toString('utf8');
    const lines = text.trimEnd().split('\n');
    expect(lines.length).toBe(1 + 500 + 1 + 1 + 1);
    expect(JSON.parse(lines[500]!)).toMatchObject({ message: 'm499' });
    expect(JSON.parse(lines[501]!)).toMatchObject({ message: 'm0' });
    expect(decodeEventLine(lines[502]!, 503)).toMatchObject({ type: 'record' });
    // The count covers every line but the end line close() added.
    expect(Buffer.byteLength(text) - Buffer.byteLength(lines.at(-1)! + '\n')).toBe(w.position().bytes);
  });

  it('rejects close on a file that cannot be created', async () => {
    const w = TraceWriter.toFile('/nonexistent-dir/x/trace.ndjson', sampleHeader());
    w.write({ type: 'log', t: 1, level: 'info', message: 'x' });
    await expect(w.close()).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('a unit captured whole', () => {
  it('reads back a 4 MiB record (5.6 MB of base64 on one line) without exhausting the stack', () => {
    const bytes = new Uint8Array(4 * 1024 * 1024 + 68).map((_, i) => (i * 7) & 0xff);
    const event: TraceEvent = {
      type: 'record',
      t: 1,
      record: {
        seq: 7,
        t: 1,
        link: 'h0.uplink.data',
        dir: 'up',
        layer: 'mux',
        kind: 'HostFrame',
        length: bytes.length,
        captured: bytes.length,
        verdict: 'HMAC_MISMATCH',
        summary: 'rejected',
      },
      bytes,
    };
    const back = decodeEventLine(encodeEventLine(event).trimEnd(), 2);
    expect(back.type === 'record' && Buffer.from(back.bytes).equals(Buffer.from(bytes))).toBe(true);
    // Not base64: still refused by name.
    expect(() => decodeEventLine(encodeEventLine(event).replace('"bytes":"', '"bytes":"=A'), 2)).toThrow(
      TraceError,
    );
  });
});
