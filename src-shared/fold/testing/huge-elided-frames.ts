// Pinned inputs of issue 30 item 19 (b): RoundFrames of 69 to 141 bytes whose
// elided tensors declare about 1 GiB of zeros, each under the fold's old
// per-tensor limit (2^28 elements), with one small full tensor so that a
// second deposit promotes the round (WIRE.md 4.4: elided tensors then ship as
// zeros). Shared by the fold's unit test and the slow fuzz.
import { DTYPE_BF16, DTYPE_F32, ROUND_KIND_MODEL } from '../../wire/constants';
import { elidedTensor, tensorFromValues, type RoundFrame } from '../../wire/round-frame';

const frame = (tensors: RoundFrame['tensors']): RoundFrame => ({
  roundKind: ROUND_KIND_MODEL,
  weight: 1,
  tensors,
});

export const HUGE_ELIDED_FRAMES: { name: string; frame: RoundFrame }[] = [
  {
    name: 'one elided f32 [16384, 16384, 1] and a full f32 [2]',
    frame: frame([elidedTensor(DTYPE_F32, [16384, 16384, 1]), tensorFromValues(DTYPE_F32, [2], [1, 2])]),
  },
  {
    name: 'two elided bf16 [16384, 16384] and a full bf16 [2]',
    frame: frame([
      elidedTensor(DTYPE_BF16, [16384, 16384]),
      elidedTensor(DTYPE_BF16, [16384, 16384]),
      tensorFromValues(DTYPE_BF16, [2], [1, 2]),
    ]),
  },
  {
    name: 'four elided f32 [8192, 8192] and a full f32 [1]',
    frame: frame([
      ...[0, 1, 2, 3].map(() => elidedTensor(DTYPE_F32, [8192, 8192])),
      tensorFromValues(DTYPE_F32, [1], [1]),
    ]),
  },
  {
    name: 'three elided f32 [8192, 8192], two elided bf16 [8192, 8192] and a full f32 [1, 1, 1]',
    frame: frame([
      ...[0, 1, 2].map(() => elidedTensor(DTYPE_F32, [8192, 8192])),
      ...[0, 1].map(() => elidedTensor(DTYPE_BF16, [8192, 8192])),
      tensorFromValues(DTYPE_F32, [1, 1, 1], [1]),
    ]),
  },
];
