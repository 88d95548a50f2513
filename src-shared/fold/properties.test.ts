// Seeded property tests of the fold: for random rounds (1-5 deposits of one
// schema, random elision, both dtypes), the streamed relay fold at a random
// chunk size is byte-identical to a from-scratch HostFold (seeds verbatim
// until a second full payload promotes the whole frame to f32 sums from +0.0
// in merge order, re-encoded in the dtype; masses summed in f64), and the
// controller's reduce to a from-scratch reduce_realized_work.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytesToHex } from '../wire/bytes';
import { DTYPE_BF16, DTYPE_F32 } from '../wire/constants';
import { nobleMac } from '../wire/mac';
import { encodeRoundFrame, type RoundFrame } from '../wire/round-frame';
import { RoundFrameStreamParser } from '../wire/round-frame-stream';
import { elidedTensor, tensorFromValues } from '../wire/tensor';
import { FoldAccumulator, reduceRealizedWork } from './index';
import { hostFoldReference, reduceReference } from './testing/flodl-reference';

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

describe('fold properties (fast-check, seeded)', () => {
  it('streamed relay fold = HostFold reference, reduce = reduce_realized_work reference, byte for byte', () => {
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
        expect(acc.mergeOrder).toEqual(frames.map((_, rank) => rank));
        const want = bytesToHex(encodeRoundFrame(hostFoldReference(frames), mac));
        expect(bytesToHex(encodeRoundFrame(acc.result()!, mac))).toBe(want);
        expect(bytesToHex(encodeRoundFrame(reduceRealizedWork(frames), mac))).toBe(
          bytesToHex(encodeRoundFrame(reduceReference(frames), mac)),
        );
        acc.reset();
      }),
      { numRuns: 300, seed: 20261129 },
    );
  });
});
