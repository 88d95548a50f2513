// The synthetic model frame every bench figure runs on: the lab's model
// layout for `bytes`, values from the lab's seeded generator.
import { DTYPE_F32 } from '@shared/wire/constants';
import type { RoundFrame } from '@shared/wire/round-frame';
import { tensorFromValues } from '@shared/wire/tensor';
import { fillValues, modelLayout } from '@shared/synthetic';

export function modelFrame(bytes: number, seed: number, rank: number, dtype = DTYPE_F32): RoundFrame {
  const { shapes } = modelLayout(bytes);
  let start = 0;
  const tensors = shapes.map((dims) => {
    const n = dims.reduce((a, b) => a * b, 1);
    const v = new Float32Array(n);
    fillValues(seed, rank, 0, start, v);
    start += n;
    return tensorFromValues(dtype, dims, v);
  });
  return { roundKind: 0, weight: 1, tensors };
}
