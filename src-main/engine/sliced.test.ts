// Sliced MACs, encodes and reduce give exactly the codec's one-shot bytes.
import { describe, expect, it } from 'vitest';
import { reduceRealizedWork } from '@shared/fold';
import { REC_HOST_FRAME } from '@shared/wire/constants';
import { encodeMuxHeader } from '@shared/wire/mux';
import { encodeRoundFrame, encodeRoundFrameChunks, type RoundFrame } from '@shared/wire/round-frame';
import { saltFromHex } from '@shared/wire/salt';
import { tensorFromValues } from '@shared/wire/tensor';
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

  it('reduces like reduceRealizedWork, byte for byte, in both dtypes (one arithmetic at every size)', async () => {
    for (const dtype of [0, 1]) {
      const frames = [big(1, dtype), big(2, dtype), big(3, dtype)];
      const got = await reduceSliced(frames);
      const want = reduceRealizedWork(frames);
      expect(concat(encodeRoundFrameChunks(got, mac)).equals(concat(encodeRoundFrameChunks(want, mac)))).toBe(
        true,
      );
    }
  });

  it("issue 16.3 over 4 MiB: bf16 0x3F81 @ 1 + 0x4002 @ 2 gives flodl's 0x3F81 on the sliced path", async () => {
    const n = 1_200_000; // 2.4 MB per frame: 4.8 MB in all, over the one-shot limit
    const host = (bits: number, weight: number): RoundFrame => {
      const data = new Uint8Array(n * 2);
      data[0] = bits & 0xff;
      data[1] = bits >> 8;
      return { roundKind: 0, weight, tensors: [{ dtype: 1, dims: [n], data }] };
    };
    const got = await reduceSliced([host(0x3f81, 1), host(0x4002, 2)]);
    const d = got.tensors[0].data!;
    expect(d[0] | (d[1] << 8)).toBe(0x3f81);
    expect(got.weight).toBe(3);
  });
});
