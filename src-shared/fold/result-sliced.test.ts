// resultSliced: the same frame as result(), the sums computed (and bf16 sums
// re-encoded) slice by slice with the caller's pause in between (so a relay's
// event loop keeps turning).
import { describe, expect, it } from 'vitest';
import { bytesToHex } from '../wire/bytes';
import { DTYPE_BF16, DTYPE_F32 } from '../wire/constants';
import { nobleMac } from '../wire/mac';
import { encodeRoundFrame, type RoundFrame } from '../wire/round-frame';
import { elidedTensor, tensorFromValues } from '../wire/tensor';
import { FoldAccumulator } from './index';

const mac = nobleMac(new Uint8Array(16).fill(9));
const values = (n: number, k: number) =>
  Array.from({ length: n }, (_, i) => ((i * 13 + k * 7) % 101) / 4 - 12);
const frame = (k: number, elided: boolean[]): RoundFrame => ({
  roundKind: 0,
  weight: k,
  tensors: [DTYPE_BF16, DTYPE_F32, DTYPE_BF16].map((dtype, i) =>
    elided[i]
      ? elidedTensor(dtype, [1000 + i])
      : tensorFromValues(dtype, [1000 + i], values(1000 + i, k + i)),
  ),
});

function folded(frames: RoundFrame[]): FoldAccumulator {
  const acc = new FoldAccumulator();
  frames.forEach((f, r) => acc.deposit(r, f));
  return acc;
}

describe('FoldAccumulator.resultSliced', () => {
  it('gives result() byte for byte (sums, single seeds, elided), pausing between slices', async () => {
    const rounds = [
      [frame(1, [false, false, false]), frame(2, [false, false, true]), frame(3, [true, false, true])],
      [frame(1, [false, true, true])],
      [frame(1, [true, true, true]), frame(2, [true, true, true])],
    ];
    // Only sums are computed in slices, a merge block (4096 elements here) at a time: round 0
    // promotes its whole frame, so its three tensors are sums of 2, 3 and 1 summands (2000,
    // 3003 and 1002 element-adds), each past the slice of 64: a pause after each.
    const expectedPauses = [3, 0, 0];
    for (const [i, frames] of rounds.entries()) {
      const want = bytesToHex(encodeRoundFrame(folded(frames).result()!, mac));
      let pauses = 0;
      const got = await folded(frames).resultSliced(async () => void pauses++, 64);
      expect(bytesToHex(encodeRoundFrame(got!, mac))).toBe(want);
      expect(pauses).toBe(expectedPauses[i]);
    }
  });

  it('a round taken twice gives the same frame: the sums are computed once (the summed bytes are released)', async () => {
    const frames = [frame(1, [false, false, false]), frame(2, [false, false, true])];
    const want = bytesToHex(encodeRoundFrame(folded(frames).result()!, mac));
    const a = folded(frames);
    expect(bytesToHex(encodeRoundFrame(a.result()!, mac))).toBe(want);
    expect(bytesToHex(encodeRoundFrame(a.result()!, mac))).toBe(want);
    expect(bytesToHex(encodeRoundFrame((await a.resultSliced(() => Promise.resolve()))!, mac))).toBe(want);
    const b = folded(frames);
    const first = b.resultSliced(() => Promise.resolve(), 64);
    expect(() => b.result()).toThrow(/resultSliced/);
    const second = b.resultSliced(() => Promise.resolve(), 64);
    expect(bytesToHex(encodeRoundFrame((await second)!, mac))).toBe(want);
    expect(bytesToHex(encodeRoundFrame((await first)!, mac))).toBe(want);
    expect(bytesToHex(encodeRoundFrame(b.result()!, mac))).toBe(want);
  });

  it('takes the round at the call: errors are thrown then, and deposits stop merging', () => {
    const acc = folded([frame(1, [false, false, false])]);
    void acc.resultSliced(() => Promise.resolve());
    expect(() => acc.beginDeposit(5)).toThrow(/reset\(\)/);
    const bad = new FoldAccumulator();
    const short = {
      roundKind: 0,
      weight: 1,
      tensors: [{ dtype: DTYPE_F32, dims: [2], data: new Uint8Array(4) }],
    };
    // As flodl: the first deposit is held as it came; its byte count is checked when it is summed.
    bad.deposit(0, short);
    expect(() => bad.deposit(1, short)).toThrow(/numel/);
    expect(() => bad.resultSliced(() => Promise.resolve())).toThrow(/numel/);
    return expect(new FoldAccumulator().resultSliced(() => Promise.resolve())).resolves.toBeNull();
  });
});
