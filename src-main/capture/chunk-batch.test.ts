import { describe, expect, it } from 'vitest';
import { BATCH_BYTES, ChunkBatcher, type ChunkBatch } from './chunk-batch';

const bytes = (n: number, seed: number) => new Uint8Array(n).map((_, i) => (i * 7 + seed) & 0xff);

/** What the worker rebuilds from the batches: each segment's bytes, in order. */
function unpack(batches: ChunkBatch[]) {
  const out: { conn: number; dir: string; data: number[] }[] = [];
  for (const b of batches) {
    let at = 0;
    for (const s of b.segments) {
      out.push({ conn: s.conn, dir: s.dir, data: [...b.bytes.subarray(at, at + s.length)] });
      at += s.length;
    }
    expect(at).toBe(b.bytes.length);
  }
  return out;
}

describe('ChunkBatcher', () => {
  it('gathers a turn of chunks from several connections into one batch, in order', async () => {
    const sent: ChunkBatch[] = [];
    const b = new ChunkBatcher((x) => sent.push(x));
    const chunks = [bytes(10, 1), bytes(300, 2), bytes(5, 3)];
    b.add(1, 'up', 0, chunks[0]);
    b.add(2, 'down', 1, chunks[1]);
    b.add(1, 'up', 2, chunks[2]);
    expect(sent).toHaveLength(0);
    await new Promise((r) => setImmediate(r));
    expect(sent).toHaveLength(1);
    expect(unpack(sent)).toEqual([
      { conn: 1, dir: 'up', data: [...chunks[0]] },
      { conn: 2, dir: 'down', data: [...chunks[1]] },
      { conn: 1, dir: 'up', data: [...chunks[2]] },
    ]);
  });

  it('copies: a chunk changed after it was added reaches the worker as it was', () => {
    const sent: ChunkBatch[] = [];
    const b = new ChunkBatcher((x) => sent.push(x));
    const c = bytes(64, 9);
    const was = [...c];
    b.add(0, 'up', 0, c);
    c.fill(0);
    b.flush();
    expect([...sent[0].bytes]).toEqual(was);
  });

  it('sends a full batch before it overflows and a chunk larger than a batch alone', () => {
    const sent: ChunkBatch[] = [];
    const b = new ChunkBatcher((x) => sent.push(x));
    const big = bytes(BATCH_BYTES - 100, 4);
    const next = bytes(200, 5);
    const huge = bytes(BATCH_BYTES + 1, 6);
    b.add(0, 'up', 0, big);
    b.add(0, 'up', 1, next);
    b.add(0, 'up', 2, huge);
    b.flush();
    expect(sent.map((x) => x.segments.map((s) => s.length))).toEqual([
      [big.length],
      [next.length],
      [huge.length],
    ]);
    const back = unpack(sent);
    expect(back[0].data).toEqual([...big]);
    expect(back[2].data).toEqual([...huge]);
  });

  it('a large batch gives its buffer away (it may be transferred); a small one is copied out', () => {
    const sent: ChunkBatch[] = [];
    const b = new ChunkBatcher((x) => sent.push(x));
    b.add(0, 'up', 0, bytes(16, 1));
    b.flush();
    b.add(0, 'up', 0, bytes(BATCH_BYTES / 2, 2));
    b.flush();
    expect(sent[0].bytes.buffer.byteLength).toBe(16);
    expect(sent[1].bytes.buffer.byteLength).toBe(BATCH_BYTES);
    // After giving the large buffer away, the next batch is in a new one.
    b.add(0, 'up', 0, bytes(BATCH_BYTES / 2, 3));
    b.flush();
    expect(sent[2].bytes.buffer).not.toBe(sent[1].bytes.buffer);
  });
});

describe('ChunkBatcher buffers', () => {
  it('reuses a buffer the worker gave back', () => {
    const sent: ChunkBatch[] = [];
    const b = new ChunkBatcher((x) => sent.push(x));
    b.add(0, 'up', 0, bytes(BATCH_BYTES / 2, 1));
    b.flush();
    b.giveBack(sent[0].bytes.buffer as ArrayBuffer);
    b.add(0, 'up', 0, bytes(BATCH_BYTES / 2, 2));
    b.flush();
    expect(sent[1].bytes.buffer).toBe(sent[0].bytes.buffer);
    expect([...sent[1].bytes]).toEqual([...bytes(BATCH_BYTES / 2, 2)]);
  });
});
