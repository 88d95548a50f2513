// Seeded property tests of the fold: for random rounds (1-5 deposits of one
// schema, random elision, both dtypes), the streamed fold at a random chunk
// size is byte-identical to sumFrames and to an independent reference:
// no full deposit -> elided, one -> that payload verbatim, more -> f32 sums
// from +0.0 in arrival order, re-encoded in the dtype; masses summed in f64.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytesToHex } from './wire/bytes';
import { DTYPE_BF16, DTYPE_F32 } from './wire/constants';
import { nobleMac } from './wire/mac';
import { encodeRoundFrame, type RoundFrame } from './wire/round-frame';
import { RoundFrameStreamParser } from './wire/round-frame-stream';
import { elidedTensor, encodeValues, tensorFromValues, tensorValues, type TensorEntry } from './wire/tensor';
import { FoldAccumulator, sumFrames } from './fold';

const mac = nobleMac(new Uint8Array(16).fill(7));

const schema = fc.array(
  fc.record({
    dtype: fc.constantFrom(DTYPE_F32, DTYPE_BF16),
    dims: fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 2 }),
  }),
  { minLength: 1, maxLength: 3 },
);

const round = schema.chain((tensors) =>
  fc.record({
    roundKind: fc.constantFrom(0, 1),
    chunk: fc.integer({ min: 1, max: 80 }),
    frames: fc.array(
      fc.record({
        weight: fc.double({ min: 0, max: 1e6, noNaN: true }),
        tensors: fc.tuple(
          ...tensors.map((t) => {
            const n = t.dims.reduce((a, b) => a * b, 1);
            return fc.option(
              fc.array(fc.float({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }), {
                minLength: n,
                maxLength: n,
              }),
              { nil: null },
            );
          }),
        ),
      }),
      { minLength: 1, maxLength: 5 },
    ),
    tensors: fc.constant(tensors),
  }),
);

function reference(frames: RoundFrame[]): RoundFrame {
  const tensors: TensorEntry[] = frames[0].tensors.map((t0, i) => {
    const full = frames.map((f) => f.tensors[i]).filter((t) => t.data !== null);
    if (full.length === 0) return elidedTensor(t0.dtype, t0.dims);
    if (full.length === 1) return { dtype: t0.dtype, dims: t0.dims, data: full[0].data };
    const acc = new Float32Array(tensorValues(t0).length);
    for (const t of full) {
      const v = tensorValues(t);
      for (let j = 0; j < acc.length; j++) acc[j] = Math.fround(acc[j] + v[j]);
    }
    return { dtype: t0.dtype, dims: t0.dims, data: encodeValues(t0.dtype, acc) };
  });
  return { roundKind: frames[0].roundKind, weight: frames.reduce((m, f) => m + f.weight, 0), tensors };
}

describe('fold properties (fast-check, seeded)', () => {
  it('streamed fold = sumFrames = independent reference, byte for byte', () => {
    fc.assert(
      fc.property(round, (r) => {
        const frames: RoundFrame[] = r.frames.map((f) => ({
          roundKind: r.roundKind,
          weight: f.weight,
          tensors: r.tensors.map((t, i) =>
            f.tensors[i] === null
              ? elidedTensor(t.dtype, t.dims)
              : tensorFromValues(t.dtype, t.dims, f.tensors[i]!),
          ),
        }));
        const acc = new FoldAccumulator();
        frames.forEach((f, rank) => {
          const bytes = encodeRoundFrame(f, mac);
          const p = new RoundFrameStreamParser(mac, { sink: acc.beginDeposit(rank), totalLen: bytes.length });
          for (let pos = 0; pos < bytes.length; pos += r.chunk) p.push(bytes.subarray(pos, pos + r.chunk));
          p.end();
        });
        const want = bytesToHex(encodeRoundFrame(reference(frames), mac));
        expect(bytesToHex(encodeRoundFrame(acc.result()!, mac))).toBe(want);
        expect(bytesToHex(encodeRoundFrame(sumFrames(frames), mac))).toBe(want);
        acc.reset();
      }),
      { numRuns: 300, seed: 20261129 },
    );
  });
});
