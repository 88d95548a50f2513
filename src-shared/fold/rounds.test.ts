// Round-to-round reuse of the fold's memory, and a round's result staying
// put while it is shipped (deposits still streaming merge nothing more).
import { describe, expect, it } from 'vitest';
import { DTYPE_F32 } from '../wire/constants';
import { nobleMac } from '../wire/mac';
import { encodeRoundFrame, type RoundFrame } from '../wire/round-frame';
import { RoundFrameStreamParser } from '../wire/round-frame-stream';
import { tensorFromValues, tensorValues } from '../wire/tensor';
import { FoldAccumulator } from './index';
import { FoldRounds } from './rounds';

const mac = nobleMac(new Uint8Array(16).fill(3));
// Large enough for the kernel's own (recycled) memories.
const N = 70_000;
const frame = (v: number): RoundFrame => ({
  roundKind: 0,
  weight: 1,
  tensors: [tensorFromValues(DTYPE_F32, [N], new Array<number>(N).fill(v))],
});

describe('FoldRounds', () => {
  it('hands back the accumulator of `depth` rounds ago, reset; the last round stays intact while the next one folds', () => {
    const rounds = new FoldRounds(2);
    const seen: FoldAccumulator[] = [];
    let previous: Float32Array | null = null;
    let previousValue = 0;
    for (let r = 0; r < 12; r++) {
      const acc = r === 0 ? rounds.current : rounds.next();
      seen.push(acc);
      expect(acc.depositCount).toBe(0);
      acc.deposit(0, frame(r));
      acc.deposit(1, frame(2 * r));
      // The previous round's HostFrame bytes may still be on their way: untouched by this round.
      if (previous) expect(previous[0] === previousValue && previous[N - 1] === previousValue).toBe(true);
      const data = acc.result()!.tensors[0].data!;
      // A view of the sums, as the relay ships them.
      previous = new Float32Array(data.buffer, data.byteOffset, N);
      previousValue = 3 * r;
      expect(previous[0]).toBe(previousValue);
    }
    expect(seen[2]).toBe(seen[0]);
    expect(seen[3]).toBe(seen[1]);
    expect(seen[1]).not.toBe(seen[0]);
    expect(() => new FoldRounds(0)).toThrow(RangeError);
  });
});

describe('taking a round seals it', () => {
  it('a deposit still streaming when the round is taken changes nothing afterwards', () => {
    const acc = new FoldAccumulator();
    acc.deposit(0, frame(1));
    const late = encodeRoundFrame(frame(100), mac);
    const p = new RoundFrameStreamParser(mac, { totalLen: late.length, sink: acc.beginDeposit(1) });
    p.push(late.subarray(0, 40_000)); // part of its tensor merged, then the rank is declared dead and the round ships
    const shipped = acc.result()!;
    const before = Uint8Array.from(shipped.tensors[0].data!);
    p.push(late.subarray(40_000));
    p.end();
    expect(Buffer.compare(shipped.tensors[0].data!, before)).toBe(0);
    expect(acc.ranks).toEqual([0]);
    expect(() => acc.beginDeposit(2)).toThrow(/reset\(\)/);
    acc.reset();
    acc.deposit(2, frame(5));
    expect(tensorValues(acc.result()!.tensors[0])[N - 1]).toBe(5);
  });
});
