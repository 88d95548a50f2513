// countGc sees the process's own collections: a forced full GC is a major one.
import { describe, expect, it } from 'vitest';
import v8 from 'node:v8';
import vm from 'node:vm';
import { countGc } from './gc-count';

describe('countGc', () => {
  it('counts a full collection as major, with its pause', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const stop = countGc();
    gc();
    gc();
    // GC entries reach observers asynchronously.
    await new Promise((r) => setTimeout(r, 20));
    const c = stop();
    expect(c.major).toBeGreaterThanOrEqual(2);
    expect(c.majorPauseMs).toBeGreaterThan(0);
    expect(c.pauseMs).toBeGreaterThanOrEqual(c.majorPauseMs);
    // Nothing is counted once stopped.
    gc();
    await new Promise((r) => setTimeout(r, 20));
    expect(stop().major).toBe(c.major);
  });
});
