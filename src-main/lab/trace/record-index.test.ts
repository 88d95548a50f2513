// The sparse index of a recording being written: any unit read back by seq,
// byte for byte, including lines still in the writer's batch, across index
// strides and past seqs the recording never had; a page of the list's rows
// read from the lines' heads alone, never their captured bytes.
import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TraceRecorder } from './recorder';
import { TraceWriter } from './ndjson';
import { RecordIndex, INDEX_STRIDE } from './record-index';
import { sampleHeader } from './testing/sample-session';
import type { UnitRecord } from '@shared/lab/records';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-record-index-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const unit = (seq: number): [UnitRecord, Uint8Array] => {
  const bytes = new Uint8Array(1 + (seq % 97)).map((_, i) => (seq * 31 + i) & 0xff);
  return [
    {
      seq,
      t: seq,
      link: 'h0.uplink.data',
      dir: 'up',
      layer: 'mux',
      kind: 'HostFrame',
      length: bytes.length + (seq % 3 === 0 ? 50 : 0),
      captured: bytes.length,
      verdict: 'ok',
      summary: `unit ${seq}`,
    },
    bytes,
  ];
};

describe('RecordIndex', () => {
  it('reads back every unit written, by seq and by range, before and after a flush', async () => {
    const file = path.join(dir, 'session.trace.ndjson');
    // Written in place, as the lab host's live recording is (TraceWriter.toFile renames on close).
    const writer = new TraceWriter(fs.createWriteStream(file), sampleHeader());
    const index = new RecordIndex(file);
    index.attachWriter(writer);
    const rec = new TraceRecorder(writer, () => 0, { index });
    // Seqs with holes (a unit the recording never had), and other events between units.
    const seqs = Array.from({ length: 5 * INDEX_STRIDE + 7 }, (_, i) => i + Math.floor(i / 50));
    for (const seq of seqs) {
      const [r, b] = unit(seq);
      rec.record(r, b);
      if (seq % 10 === 0) rec.lifecycle({ action: 'pauseRank', rank: 0 });
    }
    expect(index.size).toBe(seqs.length);
    // Straight away: the lines are still in the writer's batch.
    const last = seqs.at(-1)!;
    expect((await index.read(last))?.bytes).toEqual(unit(last)[1]);
    for (const seq of [0, 1, INDEX_STRIDE - 1, INDEX_STRIDE, INDEX_STRIDE + 1, 200, last]) {
      const got = await index.read(seq);
      expect(got?.record).toEqual(unit(seq)[0]);
      expect(got?.bytes).toEqual(unit(seq)[1]);
    }
    // A hole and a seq past the end: not there.
    expect(await index.read(50)).toBeUndefined();
    expect(await index.read(last + 1)).toBeUndefined();
    const range = await index.records(100, 80);
    expect(range.map((r) => r.seq)).toEqual(seqs.filter((s) => s >= 100 && s < 180));
    expect(range[5]).toEqual(unit(range[5]!.seq)[0]);
    await rec.close();
    expect((await index.read(3))?.bytes).toEqual(unit(3)[1]);
  });

  it('lists a page of model-sized units from their heads: bytes read grow with the page, not the payload', async () => {
    const file = path.join(dir, 'big.trace.ndjson');
    const writer = new TraceWriter(fs.createWriteStream(file), sampleHeader());
    const index = new RecordIndex(file);
    index.attachWriter(writer);
    const rec = new TraceRecorder(writer, () => 0, { index });
    // Every third unit a 64 KiB capture (a model-sized HostFrame cut by the snap length), the rest small.
    const big = (seq: number) => seq % 3 === 1;
    const units = Array.from({ length: 600 }, (_, seq): [UnitRecord, Uint8Array] => {
      const [r, small] = unit(seq);
      // A long line for its summary alone (6,000 bytes of UTF-8), its bytes a few.
      if (seq === 452) return [{ ...r, summary: 'é'.repeat(3000) }, small];
      if (!big(seq)) return [r, small];
      const bytes = new Uint8Array(64 * 1024).map((_, i) => (seq + i) & 0xff);
      return [{ ...r, length: 4 * 1024 * 1024, captured: bytes.length }, bytes];
    });
    for (const [r, b] of units) {
      rec.record(r, b);
      if (r.seq % 25 === 0) rec.lifecycle({ action: 'pauseRank', rank: 0 });
    }
    const before = index.bytesRead;
    const page = await index.records(150, 300);
    expect(page).toEqual(units.slice(150, 450).map(([r]) => r));
    // 100 of these units hold 64 KiB each (8.7 MB of base64): a page reads their heads only.
    expect(index.bytesRead - before).toBeLessThan(300 * 1024);
    // One unit's bytes: its own line, whole.
    const one = await index.read(301);
    expect(one?.record).toEqual(units[301]![0]);
    expect(one?.bytes).toEqual(units[301]![1]);
    expect(await index.records(440, 20)).toEqual(units.slice(440, 460).map(([r]) => r));
    expect((await index.read(452))?.record).toEqual(units[452]![0]);
    // The index keeps one pair per stride and one entry per long line, nothing per short one.
    expect(index.entries).toBe(Math.ceil(600 / INDEX_STRIDE) + 200 + 1);
    await rec.close();
  });
});
