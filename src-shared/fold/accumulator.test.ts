// The fold and the reduce: WIRE.md 5.2 items 8-16, 5.4 items 5-10, 14-16,
// 19-27 and 5.5 items 11-12, as pure functions.
import { describe, expect, it } from 'vitest';
import { bytesToHex } from '../wire/bytes';
import { DTYPE_BF16, DTYPE_F32, ROUND_KIND_CONTROL, ROUND_KIND_MODEL } from '../wire/constants';
import { WireError } from '../wire/errors';
import { nobleMac } from '../wire/mac';
import {
  decodeRoundFrame,
  encodeRoundFrame,
  elidedTensor,
  tensorFromValues,
  tensorValues,
  type RoundFrame,
} from '../wire/round-frame';
import { RoundFrameStreamParser } from '../wire/round-frame-stream';
import { FoldAccumulator, firstMismatch, reduceRealizedWork, roundsAlmostEqual, sumFrames } from './index';

const mac = nobleMac(new Uint8Array(16).fill(0x11));

const model = (weight: number, ...tensors: [number, number[]][]): RoundFrame => ({
  roundKind: ROUND_KIND_MODEL,
  weight,
  tensors: tensors.map(([dtype, values]) => tensorFromValues(dtype, [values.length], values)),
});
const f32 = (w: number, v: number[]) => model(w, [DTYPE_F32, v]);
const bf16 = (w: number, v: number[]) => model(w, [DTYPE_BF16, v]);
const control = (v: number[]) => ({ ...f32(0, v), roundKind: ROUND_KIND_CONTROL });
const elided = (w: number, dtype: number, n: number): RoundFrame => ({
  roundKind: ROUND_KIND_MODEL,
  weight: w,
  tensors: [elidedTensor(dtype, [n])],
});
const values = (f: RoundFrame, i = 0) => Array.from(tensorValues(f.tensors[i]));
const frameHex = (f: RoundFrame) => bytesToHex(encodeRoundFrame(f, mac));

/** Deposits each frame through the streaming parser in `step`-byte chunks. */
function streamFold(frames: RoundFrame[], step: number): RoundFrame {
  const acc = new FoldAccumulator();
  frames.forEach((f, rank) => {
    const bytes = encodeRoundFrame(f, mac);
    const p = new RoundFrameStreamParser(mac, { sink: acc.beginDeposit(rank), totalLen: bytes.length });
    for (let pos = 0; pos < bytes.length; pos += step) p.push(bytes.subarray(pos, pos + step));
    p.end();
  });
  return acc.result()!;
}

function message(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(WireError);
    return (e as Error).message;
  }
  return expect.fail('expected an error') as never;
}

describe('relay fold (5.2)', () => {
  it('8. [1,2]@3 + [10,20]@1 -> [11,22]@4', () => {
    const r = sumFrames([f32(3, [1, 2]), f32(1, [10, 20])]);
    expect(values(r)).toEqual([11, 22]);
    expect(r.weight).toBe(4);
  });

  it('10-11. a single deposit is the identity, byte for byte', () => {
    for (const f of [f32(1.5, [4]), bf16(2, [9, -0.09375]), f32(2, [-0, 1])]) {
      const acc = new FoldAccumulator();
      acc.deposit(1, f);
      expect(frameHex(acc.result()!)).toBe(frameHex(f));
    }
  });

  it('a -0.0 seed sums from +0.0 once a second deposit merges (flodl promotion), for any chunking', () => {
    const frames = [f32(1, [-0, -0, 2]), f32(1, [-0, 1, -0])];
    for (const got of [sumFrames(frames), streamFold(frames, 3)]) {
      const v = values(got);
      expect(Object.is(v[0], 0)).toBe(true);
      expect(v.slice(1)).toEqual([1, 2]);
    }
    // The relay ships a single deposit verbatim; the controller's sum_frames is 0.0 + x (issue 16.4).
    expect(Object.is(values(streamFold([f32(1, [-0])], 1))[0], -0)).toBe(true);
    expect(Object.is(values(sumFrames([f32(1, [-0])]))[0], 0)).toBe(true);
  });

  it('12. the incremental fold is byte-equal to sum_frames, f32 and bf16, for any chunking', () => {
    for (const mk of [f32, bf16]) {
      const frames = [mk(3, [1.5, -2, 8]), mk(1, [0.5, 4, -16])];
      const want = frameHex(sumFrames(frames));
      for (const step of [1, 3, 5, 7, 64, 4096]) expect(frameHex(streamFold(frames, step))).toBe(want);
      expect(values(sumFrames(frames))).toEqual([2, 2, -8]);
    }
  });

  it('a model-sized tensor folds through the kernel in place, chunk by chunk, exactly as the sum', () => {
    const n = 100_000;
    const xs = [1, 2, 3].map((k) =>
      Float32Array.from({ length: n }, (_, i) => ((i * 7 + k * 13) % 1000) / 8 - 60),
    );
    const want = Float32Array.from({ length: n }, (_, i) =>
      Math.fround(Math.fround(xs[0][i] + xs[1][i]) + xs[2][i]),
    );
    for (const step of [999, 65_536]) {
      const got = streamFold(
        xs.map((x, k) => model(k + 1, [DTYPE_F32, Array.from(x)])),
        step,
      );
      expect(tensorValues(got.tensors[0])).toEqual(want);
      expect(got.weight).toBe(6);
    }
  });

  it('many rounds of model-sized tensors stay exact while the kernel recycles its memories', () => {
    const acc = new FoldAccumulator();
    const a = f32(1, new Array(70_000).fill(1));
    const b = f32(1, new Array(70_000).fill(2));
    for (let round = 0; round < 300; round++) {
      acc.deposit(0, a);
      acc.deposit(1, b);
      const r = acc.result()!;
      acc.reset();
      const v = tensorValues(r.tensors[0]);
      if (v[0] !== 3 || v[69_999] !== 3) expect.fail(`round ${round}: ${v[0]}, ${v[69_999]}`);
    }
  });

  it('13, 5.4-20. an all-elided round stays elided', () => {
    const r = sumFrames([elided(0, DTYPE_F32, 3), elided(0, DTYPE_F32, 3)]);
    expect(r.tensors[0].data).toBeNull();
    expect(r.weight).toBe(0);
    expect(frameHex(streamFold([elided(0, DTYPE_BF16, 3), elided(0, DTYPE_BF16, 3)], 2))).toBe(
      frameHex(elided(0, DTYPE_BF16, 3)),
    );
  });

  it('14. elided deposits merge with full ones in any order, both dtypes', () => {
    for (const [dt, mk] of [
      [DTYPE_F32, f32],
      [DTYPE_BF16, bf16],
    ] as const) {
      const e = elided(0, dt, 2);
      const f0 = mk(1, [1, 2]);
      const f2 = mk(2, [4, 8]);
      expect(values(sumFrames([e, f0]))).toEqual([1, 2]);
      expect(values(sumFrames([f0, e]))).toEqual([1, 2]);
      expect(values(sumFrames([f0, e, f2]))).toEqual([5, 10]);
      expect(sumFrames([f0, e, f2]).weight).toBe(3);
      expect(frameHex(sumFrames([e, f0]))).toBe(frameHex(f0));
    }
  });

  it('15. a dtype mix is rejected loudly and names bf16_wire', () => {
    const m = message(() => sumFrames([f32(1, [1]), bf16(1, [1])]));
    expect(m).toMatch(/dtype/);
    expect(m).toMatch(/bf16_wire/);
  });

  it('16. a double deposit is rejected', () => {
    const acc = new FoldAccumulator();
    acc.deposit(0, f32(1, [1]));
    expect(message(() => acc.deposit(0, f32(1, [1])))).toMatch(/deposited twice.*ping-pong violated/);
    expect(() => acc.result()).toThrow(/deposited twice/);
  });

  it('rejects desynced kinds and tensor counts, shapes and byte lengths', () => {
    expect(message(() => sumFrames([f32(1, [1]), control([1])]))).toMatch(/desynced reduce rounds/);
    expect(message(() => sumFrames([f32(1, [1]), model(1, [DTYPE_F32, [1]], [DTYPE_F32, [2]])]))).toMatch(
      /desynced reduce rounds/,
    );
    expect(message(() => sumFrames([f32(1, [1, 2]), f32(1, [1, 2, 3])]))).toMatch(/shape/);
    const badLen: RoundFrame = {
      roundKind: 0,
      weight: 1,
      tensors: [{ dtype: DTYPE_F32, dims: [2], data: new Uint8Array(4) }],
    };
    expect(message(() => sumFrames([badLen]))).toMatch(/does not match numel/);
  });

  it('reset starts a new round', () => {
    const acc = new FoldAccumulator();
    acc.deposit(0, f32(1, [1]));
    acc.reset();
    acc.deposit(0, control([5]));
    expect(acc.result()!.roundKind).toBe(ROUND_KIND_CONTROL);
    expect(acc.ranks).toEqual([0]);
  });
});

describe('controller reduce (5.4)', () => {
  it('5. an unknown dtype is rejected ("dtype tag 7")', () => {
    const f: RoundFrame = {
      roundKind: 0,
      weight: 1,
      tensors: [{ dtype: 7, dims: [1], data: new Uint8Array(4) }],
    };
    expect(message(() => reduceRealizedWork([f]))).toMatch(/dtype tag 7/);
  });

  it('6. a shape mismatch across ranks is rejected', () => {
    expect(message(() => reduceRealizedWork([f32(1, [1, 2]), f32(1, [1])]))).toMatch(/shape/);
  });

  it('7. normalizes by the accepted mass only: [3,6]@3 + dead + [5,10]@1 -> [2,4]@4', () => {
    const r = reduceRealizedWork([f32(3, [3, 6]), null, f32(1, [5, 10])]);
    expect(values(r)).toEqual([2, 4]);
    expect(r.weight).toBe(4);
  });

  it('8. Control rounds are a pure sum', () => {
    const r = reduceRealizedWork([control([1, 2]), control([3, 4])]);
    expect(values(r)).toEqual([4, 6]);
    expect(r.roundKind).toBe(ROUND_KIND_CONTROL);
  });

  it('9. zero mass returns the untouched sum (no divide)', () => {
    const r = reduceRealizedWork([f32(0, [1, 2]), f32(0, [3, 4])]);
    expect(values(r)).toEqual([4, 6]);
    expect(r.weight).toBe(0);
  });

  it('10. all dead: "no accepted frames"', () => {
    expect(message(() => reduceRealizedWork([null, undefined]))).toMatch(/no accepted frames/);
  });

  it('14-15. sum_frames is a pure sum with summed mass and kind preserved; kinds must match', () => {
    const r = sumFrames([f32(1, [3, 6]), f32(3, [5, 10])]);
    expect(values(r)).toEqual([8, 16]);
    expect(r.weight).toBe(4);
    expect(sumFrames([control([1]), control([2])]).roundKind).toBe(ROUND_KIND_CONTROL);
    expect(() => sumFrames([control([1]), f32(0, [1])])).toThrow(WireError);
  });

  it('19. an elided frame folds identically to a zeros model', () => {
    const a = sumFrames([f32(2, [1, 2, 3]), elided(0, DTYPE_F32, 3)]);
    const b = sumFrames([f32(2, [1, 2, 3]), f32(0, [0, 0, 0])]);
    expect(values(a)).toEqual(values(b));
    expect(a.weight).toBe(b.weight);
  });

  it('23. bf16 sums accumulate in f32: 512 x 1.0 = 512, not stuck at 256', () => {
    const frames = Array.from({ length: 512 }, () => bf16(0, [1]));
    expect(values(sumFrames(frames))).toEqual([512]);
  });

  it('24. sum_frames rejects a dtype mix', () => {
    expect(() => sumFrames([bf16(1, [1]), f32(1, [1])])).toThrow(/bf16_wire/);
  });

  it('25. bf16 reduce normalizes: [6,12]@3 + [4,8]@1 -> [2.5,5]@4', () => {
    const r = reduceRealizedWork([bf16(3, [6, 12]), bf16(1, [4, 8])]);
    expect(values(r)).toEqual([2.5, 5]);
    expect(r.weight).toBe(4);
    expect(r.tensors[0].dtype).toBe(DTYPE_BF16);
  });

  it('26. the bf16 reduce tracks the f32 reduce within 2/256', () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 20 - 10;
    for (let trial = 0; trial < 20; trial++) {
      const ws = [1, 2, 3];
      const xs = ws.map(() => Array.from({ length: 64 }, rnd));
      const f = reduceRealizedWork(
        xs.map((x, i) =>
          f32(
            ws[i],
            x.map((v) => v * ws[i]),
          ),
        ),
      );
      const b = reduceRealizedWork(
        xs.map((x, i) =>
          bf16(
            ws[i],
            x.map((v) => v * ws[i]),
          ),
        ),
      );
      const fv = values(f);
      // Cancellation in the sum makes element-relative error meaningless near zero: allow 2/256 of the tensor's scale.
      const scale = Math.max(...fv.map(Math.abs));
      expect(firstMismatch(values(b), fv, DTYPE_BF16, (2 / 256) * scale)).toBe(-1);
    }
  });

  it('27. host fold then reduce matches the flat reduce (associativity within tolerance)', () => {
    const xs = [f32(1, [0.1, 0.2, 0.3]), f32(2, [1.7, -0.4, 9.1]), f32(3, [-2.2, 5.5, 0.01])];
    const flat = reduceRealizedWork(xs);
    const folded = reduceRealizedWork([sumFrames([xs[0], xs[1]]), sumFrames([xs[2]])]);
    expect(roundsAlmostEqual(values(folded), values(flat), DTYPE_F32)).toBe(true);
    expect(folded.weight).toBe(flat.weight);
  });
});

describe('rank-level reduce (5.5)', () => {
  it('11. scaled weighted average on the bf16 wire: (3*[2,8] + 1*[4,16]) / 4 = [2.5,10] @4', () => {
    const r = reduceRealizedWork([bf16(3, [6, 24]), bf16(1, [4, 16])]);
    expect(values(r)).toEqual([2.5, 10]);
    expect(r.weight).toBe(4);
  });

  it('12. an idle NaN rank ships elided and cannot poison the consensus', () => {
    const r = reduceRealizedWork([f32(3, [6, 24]), elided(0, DTYPE_F32, 2)]);
    expect(values(r)).toEqual([2, 8]);
    expect(r.weight).toBe(3);
    // The same rank shipping its NaNs scaled by 0 would poison it: 0 * NaN = NaN.
    const poisoned = reduceRealizedWork([f32(3, [6, 24]), f32(0, [NaN * 0, NaN * 0])]);
    expect(values(poisoned).every(Number.isNaN)).toBe(true);
  });

  it('13. elided payloads decode to fresh zeros', () => {
    const d = decodeRoundFrame(encodeRoundFrame(elided(0, DTYPE_BF16, 4), mac), mac);
    const a = tensorValues(d.tensors[0]);
    a[0] = 5;
    expect(Array.from(tensorValues(d.tensors[0]))).toEqual([0, 0, 0, 0]);
  });
});

describe('tolerance compare (7.3)', () => {
  it('f32 1e-6 relative, bf16 three roundings (about 3/256), NaN matches NaN', () => {
    expect(roundsAlmostEqual([1, 2], [1 + 5e-7, 2], DTYPE_F32)).toBe(true);
    expect(roundsAlmostEqual([1, 2], [1 + 5e-6, 2], DTYPE_F32)).toBe(false);
    expect(roundsAlmostEqual([100], [100.7], DTYPE_BF16)).toBe(true);
    expect(roundsAlmostEqual([100], [101], DTYPE_BF16)).toBe(true);
    expect(roundsAlmostEqual([100], [101.5], DTYPE_BF16)).toBe(false);
    expect(roundsAlmostEqual([NaN, Infinity], [NaN, Infinity], DTYPE_F32)).toBe(true);
    expect(roundsAlmostEqual([1], [1, 2], DTYPE_F32)).toBe(false);
  });
});
