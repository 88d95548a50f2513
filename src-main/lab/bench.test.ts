// The bench's fold paths fold correctly (figures are never asserted: they are ratios measured by `relay-lab bench`).
import { describe, expect, it } from 'vitest';
import { FoldAccumulator, sumFrames } from '@shared/fold';
import { DTYPE_BF16, DTYPE_F32 } from '@shared/wire/constants';
import { elidedTensor, tensorFromValues } from '@shared/wire/tensor';
import type { RoundFrame } from '@shared/wire/round-frame';
import { benchFold, foldInterleaved } from './bench';

const frame = (dtype: number, k: number, elided = false): RoundFrame => ({
  roundKind: 0,
  weight: k,
  tensors: [
    tensorFromValues(
      dtype,
      [300, 7],
      Array.from({ length: 2100 }, (_, i) => ((i * 31 + k * 17) % 97) / 8 - 6),
    ),
    elided ? elidedTensor(dtype, [5]) : tensorFromValues(dtype, [5], [k, -k, 0.5, -0, 3]),
  ],
});

describe('bench fold paths', () => {
  it('interleaved socket-sized chunks fold exactly like sumFrames (two deposits: order cannot matter)', () => {
    for (const dtype of [DTYPE_F32, DTYPE_BF16]) {
      for (const chunk of [1, 5, 64, 4096]) {
        const frames = [frame(dtype, 1), frame(dtype, 2, true)];
        const acc = new FoldAccumulator();
        foldInterleaved(acc, frames, chunk);
        const got = acc.result()!;
        const want = sumFrames(frames);
        expect(got.weight).toBe(want.weight);
        got.tensors.forEach((t, i) =>
          expect(t.data === null ? null : Buffer.from(t.data).toString('hex')).toBe(
            want.tensors[i].data === null ? null : Buffer.from(want.tensors[i].data!).toString('hex'),
          ),
        );
      }
    }
  });

  it('benchFold runs every path on small frames', () => {
    const r = benchFold(64 * 1024, 3, 1);
    expect(r.totalBytes).toBeGreaterThan(3 * 64 * 1024);
    for (const k of [
      'copyMs',
      'foldMs',
      'relayFoldMs',
      'freshAccumulatorFoldMs',
      'relayStreamedWithMacMs',
    ] as const)
      expect(r[k]).toBeGreaterThan(0);
  });
});
