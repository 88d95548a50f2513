// The engine's heap tuning is one V8 flag, set once per process.
import { describe, expect, it, vi } from 'vitest';
import v8 from 'node:v8';
import { ENGINE_HEAP_GROWING_PERCENT, tuneEngineHeap } from './engine-heap';

describe('tuneEngineHeap', () => {
  it('sets the heap growing factor once, however often a cluster starts', () => {
    const set = vi.spyOn(v8, 'setFlagsFromString');
    tuneEngineHeap();
    tuneEngineHeap();
    expect(set.mock.calls).toEqual([[`--heap-growing-percent=${ENGINE_HEAP_GROWING_PERCENT}`]]);
    set.mockRestore();
  });
});
