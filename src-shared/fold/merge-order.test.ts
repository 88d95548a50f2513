// A replay's enforced merge order (FoldAccumulator.setMergeOrder, lab-only):
// deposits that verify out of turn wait, so the f32 sums are built in the
// recorded order whatever the arrival order; dropped ranks are skipped.
import { describe, expect, it } from 'vitest';
import { DTYPE_F32, ROUND_KIND_MODEL } from '../wire/constants';
import { tensorFromValues, tensorValues, type RoundFrame } from '../wire/round-frame';
import { FoldAccumulator } from './index';

// Three values whose f32 sum depends on the order: (1e8 + 1) - 1e8 = 0, (1e8 - 1e8) + 1 = 1.
const frame = (v: number): RoundFrame => ({
  roundKind: ROUND_KIND_MODEL,
  weight: 1,
  tensors: [tensorFromValues(DTYPE_F32, [1], [v])],
});
const frames: Record<number, RoundFrame> = { 0: frame(1e8), 1: frame(1), 2: frame(-1e8) };

function fold(arrival: number[], order: number[] | null, drop: number[] = []) {
  const acc = new FoldAccumulator();
  acc.setMergeOrder(order);
  for (const r of drop) acc.dropPending(r);
  for (const r of arrival) acc.deposit(r, frames[r]);
  return { order: acc.mergeOrder, sum: Array.from(tensorValues(acc.result()!.tensors[0]))[0] };
}

describe('enforced merge order (replays)', () => {
  it('commit order decides the f32 sum without it', () => {
    expect(fold([0, 1, 2], null)).toEqual({ order: [0, 1, 2], sum: 0 });
    expect(fold([0, 2, 1], null)).toEqual({ order: [0, 2, 1], sum: 1 });
  });

  it('sums in the recorded order whatever the arrival order', () => {
    for (const arrival of [
      [0, 1, 2],
      [2, 1, 0],
      [1, 2, 0],
      [0, 2, 1],
    ])
      expect(fold(arrival, [0, 1, 2])).toEqual({ order: [0, 1, 2], sum: 0 });
    expect(fold([0, 1, 2], [0, 2, 1])).toEqual({ order: [0, 2, 1], sum: 1 });
  });

  it('skips a dropped rank of the order and merges ranks outside it last', () => {
    expect(fold([2, 0], [0, 1, 2], [1]).order).toEqual([0, 2]);
    expect(fold([1, 2, 0], [2, 0]).order).toEqual([2, 0, 1]);
  });

  it('a rank dropped while later ones wait releases them', () => {
    const acc = new FoldAccumulator();
    acc.setMergeOrder([1, 0]);
    acc.deposit(0, frames[0]);
    expect(acc.depositCount).toBe(0);
    expect(acc.isPending(0)).toBe(true);
    acc.dropPending(1);
    expect(acc.mergeOrder).toEqual([0]);
  });
});
