// The relay's incremental fold against the shared reference sum: deposits of
// several ranks, cut into random chunks (even inside an element) and
// interleaved in random order, as their sockets deliver them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sumFrames } from '@shared/fold';
import { encodeRoundFrame, type RoundFrame } from '@shared/wire/round-frame';
import { RoundFrameStreamParser } from '@shared/wire/round-frame-stream';
import { saltFromHex } from '@shared/wire/salt';
import { elidedTensor, tensorFromValues, tensorValues } from '@shared/wire/tensor';
import { nobleMac } from '@shared/wire/mac';
import { FoldAcc, encodeFoldedTensor } from './fold-acc';

const mac = nobleMac(saltFromHex('112233445566778899aabbccddeeff01'));

function frames(seed: number, ranks: number, dtype: number, elidedRank: number): RoundFrame[] {
  let x = seed >>> 0;
  const rnd = () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 8 - 4;
  const shapes = [[7, 5], [13], [2, 3, 2]];
  return Array.from({ length: ranks }, (_, r) => ({
    roundKind: 0,
    weight: r + 1,
    tensors: shapes.map((dims) =>
      r === elidedRank ? elidedTensor(dtype, dims) : tensorFromValues(dtype, dims, Array.from({ length: dims.reduce((a, b) => a * b, 1) }, rnd)),
    ),
  }));
}

describe('relay fold (FoldAcc)', () => {
  it('interleaved, arbitrarily chunked deposits sum exactly like sumFrames', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 1, max: 4 }), fc.constantFrom(0, 1), fc.integer({ min: -1, max: 3 }), (seed, ranks, dtype, elided) => {
        const input = frames(seed, ranks, dtype, elided);
        const acc = new FoldAcc();
        let x = seed ^ 0x9e3779b9;
        const rnd = (n: number) => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) % n);
        const streams = input.map((f, r) => {
          const bytes = encodeRoundFrame(f, mac);
          return { bytes, off: 0, parser: new RoundFrameStreamParser(mac, { totalLen: bytes.length, sink: acc.depositSink(r) }) };
        });
        // Deliver random chunks from random ranks until every frame is in.
        let open = streams.length;
        while (open > 0) {
          const s = streams[rnd(streams.length)];
          if (s.off >= s.bytes.length) continue;
          const n = 1 + rnd(23);
          s.parser.push(s.bytes.subarray(s.off, Math.min(s.bytes.length, s.off + n)));
          s.off += n;
          if (s.off >= s.bytes.length) {
            s.parser.end();
            open--;
          }
        }
        const got = acc.result();
        const want = sumFrames(input);
        expect(got.weight).toBe(want.weight);
        expect(acc.ranks).toEqual(input.map((_, r) => r));
        got.tensors.forEach((t, i) => {
          const enc = encodeFoldedTensor(t);
          const w = want.tensors[i];
          if (w.data === null) expect(enc.data).toBeNull();
          // Same f32 accumulation order is not guaranteed: compare with the f32 tolerance on the values.
          else expect(Array.from(tensorValues(enc)).map((v, k) => Math.abs(v - tensorValues(w)[k]) <= 1e-5 * (1 + Math.abs(v)))).not.toContain(false);
        });
      }),
      { numRuns: 200 },
    );
  });

  it('rejects a second deposit of one rank and a dtype mix, naming bf16_wire', () => {
    const acc = new FoldAcc();
    acc.depositSink(0);
    expect(() => acc.depositSink(0)).toThrow(/deposited twice/);
    const b = new FoldAcc();
    const [f32, bf16] = [frames(1, 1, 0, -1)[0], frames(1, 1, 1, -1)[0]];
    new RoundFrameStreamParser(mac, { sink: b.depositSink(0) }).push(encodeRoundFrame(f32, mac));
    expect(() => new RoundFrameStreamParser(mac, { sink: b.depositSink(1) }).push(encodeRoundFrame(bf16, mac))).toThrow(/bf16_wire/);
  });
});
