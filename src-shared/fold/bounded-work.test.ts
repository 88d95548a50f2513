// Issue 30 item 19 (b): frames of a few dozen bytes whose elided tensors
// declare gigabytes. Once a second full payload promotes the round, flodl
// ships every tensor in full, elided ones as zeros (WIRE.md 4.4), so two such
// deposits made the fold materialize, sum and encode up to 1 GiB of zeros
// (1.0 to 7 s of CPU per frame measured). The fold now refuses a promotion
// whose HostFrame would exceed the frame ceiling, before materializing any of
// it, with OVER_CEILING (what every receiver would answer to that frame).
import { describe, expect, it } from 'vitest';
import { FoldAccumulator } from './index';
import { WireError } from '../wire/errors';
import { nobleMac } from '../wire/mac';
import { encodeRoundFrame, elidedTensor, tensorFromValues, type RoundFrame } from '../wire/round-frame';
import { RoundFrameStreamParser } from '../wire/round-frame-stream';
import { DTYPE_BF16, DTYPE_F32, ROUND_KIND_MODEL } from '../wire/constants';
import { hexToBytes } from '../wire/bytes';
import { HUGE_ELIDED_FRAMES } from './testing/huge-elided-frames';

const mac = nobleMac(hexToBytes('0102030405060708090a0b0c0d0e0f10'));

function depositTwice(frame: Uint8Array, acc: FoldAccumulator): unknown {
  try {
    for (const rank of [0, 1])
      new RoundFrameStreamParser(mac, { sink: acc.beginDeposit(rank), totalLen: frame.length }).push(frame);
    return 'merged';
  } catch (e) {
    return e instanceof WireError ? e.code : e;
  }
}

describe('fold: work bounded by the frame ceiling, not by what elided dims claim', () => {
  for (const { name, frame } of HUGE_ELIDED_FRAMES) {
    it(`${name} (${encodeRoundFrame(frame, mac).length} bytes), deposited twice: OVER_CEILING`, () => {
      const bytes = encodeRoundFrame(frame, mac);
      expect(bytes.length).toBeGreaterThanOrEqual(61);
      expect(bytes.length).toBeLessThanOrEqual(173);
      expect(depositTwice(bytes, new FoldAccumulator())).toBe('OVER_CEILING');
    });
  }

  it('the session ceiling bounds it: 64 MiB of declared zeros under a 16 MiB ceiling is refused', () => {
    const frame: RoundFrame = {
      roundKind: ROUND_KIND_MODEL,
      weight: 1,
      tensors: [elidedTensor(DTYPE_F32, [4096, 4096]), tensorFromValues(DTYPE_F32, [2], [1, 2])],
    };
    const bytes = encodeRoundFrame(frame, mac);
    expect(depositTwice(bytes, new FoldAccumulator({ ceiling: 16 << 20 }))).toBe('OVER_CEILING');
    const acc = new FoldAccumulator({ ceiling: (64 << 20) + 1024 });
    expect(depositTwice(bytes, acc)).toBe('merged');
  });

  it('a promoted round within the ceiling still ships elided tensors as zeros', () => {
    const frame: RoundFrame = {
      roundKind: ROUND_KIND_MODEL,
      weight: 1,
      tensors: [elidedTensor(DTYPE_BF16, [3]), tensorFromValues(DTYPE_F32, [2], [1, 2])],
    };
    const acc = new FoldAccumulator({ ceiling: 1024 });
    expect(depositTwice(encodeRoundFrame(frame, mac), acc)).toBe('merged');
    const out = acc.result()!;
    expect(out.tensors[0].data).toEqual(new Uint8Array(6));
    expect(Array.from(new Float32Array(out.tensors[1].data!.slice().buffer))).toEqual([2, 4]);
  });
});
