// The pool of recycled unit buffers: exact views, best fit within twice the
// size, a given-back buffer served again, limits, and gives it must ignore.
import { describe, expect, it } from 'vitest';
import { BufferPool } from './buffer-pool';

describe('BufferPool', () => {
  it('serves a given-back buffer again for a unit it fits, as a view of exactly the size asked', () => {
    const pool = new BufferPool();
    const a = pool.take(1000);
    expect(a.length).toBe(1000);
    a[999] = 7;
    pool.give(a);
    const b = pool.take(900);
    expect(b.length).toBe(900);
    expect(b.buffer).toBe(a.buffer);
    expect(pool.stats).toMatchObject({ taken: 2, fresh: 1, free: 0 });
  });

  it('never lends a buffer more than twice the size asked, nor one too small', () => {
    const pool = new BufferPool();
    const big = pool.take(4096);
    pool.give(big);
    expect(pool.take(1000).buffer).not.toBe(big.buffer); // 4096 > 2 x 1000
    expect(pool.take(5000).buffer).not.toBe(big.buffer); // too small
    expect(pool.take(2048).buffer).toBe(big.buffer);
  });

  it('takes the smallest buffer that fits', () => {
    const pool = new BufferPool();
    const [x, y] = [pool.take(1500), pool.take(1100)];
    pool.give(x);
    pool.give(y);
    expect(pool.take(1000).buffer).toBe(y.buffer);
  });

  it('ignores a buffer it did not lend and a second give of one it did', () => {
    const pool = new BufferPool();
    pool.give(new Uint8Array(100));
    const a = pool.take(100);
    pool.give(a);
    pool.give(a);
    expect(pool.stats.free).toBe(1);
    pool.take(100);
    expect(pool.take(100).buffer).not.toBe(a.buffer);
  });

  it('keeps no more than its limits and lets go of everything on clear', () => {
    const pool = new BufferPool({ maxFree: 2, maxFreeBytes: 1 << 20 });
    const bufs = [pool.take(10), pool.take(10), pool.take(10)];
    bufs.forEach((b) => pool.give(b));
    expect(pool.stats.free).toBe(2);
    const huge = pool.take(2 << 20);
    pool.clear();
    pool.give(huge); // over maxFreeBytes: left to the GC
    expect(pool.stats).toMatchObject({ free: 0, freeBytes: 0 });
  });

  it('gives a zero-length view without lending anything', () => {
    const pool = new BufferPool();
    expect(pool.take(0).length).toBe(0);
    expect(pool.stats.taken).toBe(0);
  });
});
