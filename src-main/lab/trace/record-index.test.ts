// The sparse index of a recording being written: any unit read back by seq,
// byte for byte, including lines still in the writer's batch, across index
// strides and past seqs the recording never had.
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
    const range = await index.range(100, 80);
    expect(range.map((e) => e.record.seq)).toEqual(seqs.filter((s) => s >= 100 && s < 180));
    await rec.close();
    expect((await index.read(3))?.bytes).toEqual(unit(3)[1]);
  });
});
