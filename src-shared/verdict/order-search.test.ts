import { describe, expect, it } from 'vitest';
import { DTYPE_BF16, DTYPE_F32 } from '../wire/constants';
import { elementOf, expectedConsensus } from './index';
import { searchMergeOrder } from './order-search';

const g = (...ranks: number[]) => ranks.map((rank) => ({ rank }));

describe('searchMergeOrder (an external relay does not report its merge order)', () => {
  const layout = { shapes: [[512]], numel: 512 };
  const indices = Array.from({ length: 512 }, (_, i) => i);

  it.each([DTYPE_F32, DTYPE_BF16])('finds the order a host really folded in (dtype %i)', (dtype) => {
    const truth = [g(2, 0, 3, 1), g(4, 5, 6, 7), g(11, 9, 8, 10)];
    const observed = [g(0, 1, 2, 3), g(4, 5, 6, 7), g(8, 9, 10, 11)];
    const e = expectedConsensus({ seed: 3, round: 1, dtype, layout, groups: truth });
    const values = indices.map((i) => elementOf(e.frame, i));
    const found = searchMergeOrder({
      seed: 3,
      round: 1,
      dtype,
      groups: observed,
      free: [true, true, true],
      indices,
      values,
    });
    expect(found).not.toBeNull();
    // Whatever it found explains every element, bit for bit.
    const again = expectedConsensus({ seed: 3, round: 1, dtype, layout, groups: found! });
    expect(indices.map((i) => elementOf(again.frame, i))).toEqual(values);
  });

  it('keeps hosts whose order is known, and gives up on a consensus no order explains', () => {
    const truth = [g(1, 0, 2), g(3, 4, 5)];
    const e = expectedConsensus({ seed: 1, round: 0, dtype: DTYPE_F32, layout, groups: truth });
    const values = indices.map((i) => elementOf(e.frame, i));
    const observed = [g(0, 1, 2), g(3, 4, 5)];
    const fixed = searchMergeOrder({
      seed: 1,
      round: 0,
      dtype: DTYPE_F32,
      groups: observed,
      free: [false, true],
      indices,
      values,
    });
    expect(fixed?.[0].map((c) => c.rank)).toEqual([0, 1, 2]);
    const wrong = values.map((v, i) => (i === 7 ? v + 1 : v));
    expect(
      searchMergeOrder({
        seed: 1,
        round: 0,
        dtype: DTYPE_F32,
        groups: observed,
        free: [true, true],
        indices,
        values: wrong,
      }),
    ).toBeNull();
  });
});
