// Sliced MACs, encodes and reduce give exactly the codec's one-shot bytes.
import { describe, expect, it } from 'vitest';
import { reduceRealizedWork } from '@shared/fold';
import { REC_HOST_FRAME } from '@shared/wire/constants';
import { encodeMuxHeader } from '@shared/wire/mux';
import { encodeRoundFrame, type RoundFrame } from '@shared/wire/round-frame';
import { saltFromHex } from '@shared/wire/salt';
import { tensorFromValues, tensorValues } from '@shared/wire/tensor';
import { nodeMac } from '../crypto/node-mac';
import { encodeRoundFrameSliced, muxHeaderSliced, reduceSliced } from './sliced';

const mac = nodeMac(saltFromHex('42'.repeat(16)));
const big = (seed: number, dtype: number): RoundFrame => {
  const n = 1_500_000;
  const v = new Float32Array(n);
  for (let i = 0; i < n; i++) v[i] = Math.sin(seed * 7 + i) * 3;
  return {
    roundKind: 0,
    weight: seed + 1,
    tensors: [tensorFromValues(dtype, [n], v), tensorFromValues(dtype, [3], [1, 2, 3])],
  };
};
const concat = (chunks: Uint8Array[]) => Buffer.concat(chunks);

describe('sliced model-sized work', () => {
  it('encodes the same frame bytes and mux header as the one-shot codec', async () => {
    const f = big(1, 0);
    const { chunks, length } = await encodeRoundFrameSliced(f, mac);
    const whole = encodeRoundFrame(f, mac);
    expect(length).toBe(whole.length);
    expect(concat(chunks).equals(Buffer.from(whole))).toBe(true);
    expect(
      Buffer.from(await muxHeaderSliced(REC_HOST_FRAME, 0, chunks, mac)).equals(
        Buffer.from(encodeMuxHeader(REC_HOST_FRAME, 0, whole, mac)),
      ),
    ).toBe(true);
  });

  it('reduces like reduceRealizedWork, in both dtypes', async () => {
    for (const dtype of [0, 1]) {
      const frames = [big(1, dtype), big(2, dtype), big(3, dtype)];
      const got = await reduceSliced(frames);
      const want = reduceRealizedWork(frames);
      expect(got.weight).toBe(want.weight);
      const a = tensorValues(got.tensors[0]);
      const b = tensorValues(want.tensors[0]);
      let worst = 0;
      for (let i = 0; i < a.length; i++)
        worst = Math.max(worst, Math.abs(a[i] - b[i]) / (1 + Math.abs(b[i])));
      expect(worst).toBeLessThanOrEqual(dtype === 0 ? 1e-6 : 2 / 256);
    }
  });
});
