// ChunkAccumulator: a unit's bytes from any chunking, joined in take or as they arrive.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ChunkAccumulator } from './reader-core';

const concat = (chunks: Uint8Array[]) => Uint8Array.from(chunks.flatMap((c) => [...c]));

describe('ChunkAccumulator', () => {
  it('gives back the same bytes however they were chunked, declared or not', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 12 }),
        fc.option(fc.integer({ min: 1, max: 1000 }), { nil: undefined }),
        (chunks, declared) => {
          const acc = new ChunkAccumulator();
          if (declared !== undefined) acc.expect(declared);
          for (const c of chunks) acc.append(c);
          expect(acc.length).toBe(chunks.reduce((a, c) => a + c.length, 0));
          expect(acc.take()).toEqual(concat(chunks));
          // Taken: empty again, and no longer joining as bytes arrive.
          expect(acc.length).toBe(0);
          expect(acc.take()).toEqual(new Uint8Array(0));
        },
      ),
    );
  });

  it('returns a unit that sat in one chunk as that chunk, without a copy', () => {
    const acc = new ChunkAccumulator();
    acc.expect(3);
    const chunk = Uint8Array.of(1, 2, 3);
    acc.append(chunk);
    expect(acc.take()).toBe(chunk);
  });

  it('joins as the bytes arrive when a length is declared: take copies nothing more', () => {
    const acc = new ChunkAccumulator();
    acc.expect(100);
    const chunks = Array.from({ length: 10 }, (_, i) => new Uint8Array(10).fill(i));
    for (const c of chunks) acc.append(c);
    const out = acc.take();
    expect(out).toEqual(concat(chunks));
    // A declared length this small is allocated at once, and nothing more.
    expect(out.buffer.byteLength).toBe(100);
    // The later chunks were copied when they came: changing one now changes nothing taken.
    chunks[9][0] = 99;
    expect(out[90]).toBe(9);
  });

  it('holds at most 1 MiB, or four times the bytes sent, when the declared length lies', () => {
    const acc = new ChunkAccumulator();
    acc.expect(1 << 30);
    for (let i = 0; i < 3; i++) acc.append(new Uint8Array(10).fill(i));
    expect(acc.take().buffer.byteLength).toBe(1 << 20);
    acc.expect(1 << 30);
    const mib = new Uint8Array(1 << 20);
    for (let i = 0; i < 3; i++) acc.append(mib);
    const out = acc.take();
    expect(out.length).toBe(3 << 20);
    expect(out.buffer.byteLength).toBeLessThanOrEqual(4 * (3 << 20));
  });

  it('ends a large honest unit in a buffer of exactly its declared length', () => {
    const acc = new ChunkAccumulator();
    acc.expect(16 << 20);
    const chunk = new Uint8Array(64 << 10);
    for (let i = 0; i < 256; i++) acc.append(chunk);
    const out = acc.take();
    expect(out.length).toBe(16 << 20);
    expect(out.buffer.byteLength).toBe(16 << 20);
  });

  it('takes its buffer of the declared length from the allocator it is given, once', () => {
    const asked: number[] = [];
    const acc = new ChunkAccumulator();
    acc.expect(30, (n) => {
      asked.push(n);
      return new Uint8Array(64).subarray(0, n);
    });
    for (let i = 0; i < 3; i++) acc.append(new Uint8Array(10).fill(i + 1));
    const out = acc.take();
    expect(asked).toEqual([30]);
    expect(out).toEqual(concat([1, 2, 3].map((v) => new Uint8Array(10).fill(v))));
    expect(out.buffer.byteLength).toBe(64);
  });
});
