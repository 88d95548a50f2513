// Issue 16's and 17's examples, over the real accumulator fed by the real
// RoundFrameStreamParser (and, for memory, the codec's LenFrameReader, as a
// relay chains them): atomic deposits, dropPending, memory that follows the
// bytes, flodl's arithmetic for single frames, promotion and bf16 roundings,
// and checks at promotion rather than on the first deposit.
import { describe, expect, it } from 'vitest';
import { bytesToHex, hexToBytes } from '../wire/bytes';
import { DTYPE_BF16, DTYPE_F32, ROUND_KIND_MODEL } from '../wire/constants';
import { LenFrameReader } from '../wire/len-frame-reader';
import { nobleMac } from '../wire/mac';
import { encodeRoundFrame, type RoundFrame } from '../wire/round-frame';
import { RoundFrameStreamParser } from '../wire/round-frame-stream';
import { elidedTensor, tensorFromValues, tensorValues, type TensorEntry } from '../wire/tensor';
import {
  FoldAccumulator,
  getFoldKernel,
  reduceRealizedWork,
  setFoldKernel,
  stagedBlocksInUse,
} from './index';
import { STAGE_BLOCK_BYTES } from './staging';

const mac = nobleMac(new Uint8Array(16).fill(0x42));
const model = (weight: number, tensors: TensorEntry[]): RoundFrame => ({
  roundKind: ROUND_KIND_MODEL,
  weight,
  tensors,
});
const f32 = (weight: number, v: number[]) => model(weight, [tensorFromValues(DTYPE_F32, [v.length], v)]);

/** A streamed deposit: its parser, fed by the test. */
function streaming(acc: FoldAccumulator, rank: number, frame: RoundFrame) {
  const bytes = encodeRoundFrame(frame, mac);
  const parser = new RoundFrameStreamParser(mac, { totalLen: bytes.length, sink: acc.beginDeposit(rank) });
  return { bytes, parser };
}

function deposit(acc: FoldAccumulator, rank: number, frame: RoundFrame): void {
  const { bytes, parser } = streaming(acc, rank, frame);
  parser.push(bytes);
  parser.end();
}

const bitsOfBf16 = (t: TensorEntry) => Array.from(new Uint16Array(t.data!.slice().buffer));
const bitsOfF32 = (t: TensorEntry) => Array.from(new Uint32Array(t.data!.slice().buffer));

describe('atomic deposits (issue 16.1)', () => {
  // f32[2]; rank 1 has deposited [9, 9] @ 2; rank 0 streams [1, 5] @ 1 and only its
  // first element has arrived when DeclareDead{0} comes: flodl ships [9, 9] @ 2.
  const firstElementOnly = (_bytes: Uint8Array) => 17 + 2 + 4 + 8 + 4; // header, meta, dims, nbytes, one f32

  it('a rank declared dead mid-frame contributes nothing: the round ships [9, 9] @ 2', () => {
    const acc = new FoldAccumulator();
    deposit(acc, 1, f32(2, [9, 9]));
    const r0 = streaming(acc, 0, f32(1, [1, 5]));
    r0.parser.push(r0.bytes.subarray(0, firstElementOnly(r0.bytes)));
    expect(acc.isPending(0)).toBe(true);
    acc.dropPending(0); // the relay's DeclareDead{0}
    const out = acc.result()!;
    expect(out.weight).toBe(2);
    expect(Array.from(tensorValues(out.tensors[0]))).toEqual([9, 9]);
    expect(acc.ranks).toEqual([1]);
  });

  it('a dead rank whose frame then completes is still not merged (its death decides at merge time)', () => {
    const acc = new FoldAccumulator();
    deposit(acc, 1, f32(2, [9, 9]));
    const r0 = streaming(acc, 0, f32(1, [1, 5]));
    r0.parser.push(r0.bytes.subarray(0, firstElementOnly(r0.bytes)));
    acc.dropPending(0); // the round is not complete yet (another local rank still owes its frame)
    r0.parser.push(r0.bytes.subarray(firstElementOnly(r0.bytes)));
    r0.parser.end(); // the MAC verifies, the commit is ignored
    deposit(acc, 2, f32(1, [1, 1]));
    const out = acc.result()!;
    expect(out.weight).toBe(3);
    expect(Array.from(tensorValues(out.tensors[0]))).toEqual([10, 10]);
    expect(acc.mergeOrder).toEqual([1, 2]);
  });

  it('no byte of a frame whose MAC fails reaches the sums, and the round can still be taken', () => {
    const acc = new FoldAccumulator();
    deposit(acc, 1, f32(2, [9, 9]));
    const forged = encodeRoundFrame(f32(1, [1000, 1000]), nobleMac(new Uint8Array(16).fill(0xaa)));
    const p = new RoundFrameStreamParser(mac, { totalLen: forged.length, sink: acc.beginDeposit(0) });
    expect(() => p.push(forged)).toThrow(/HMAC/);
    expect(Array.from(tensorValues(acc.result()!.tensors[0]))).toEqual([9, 9]);
  });

  it('a half-arrived frame is never part of the result, even without dropPending', () => {
    const acc = new FoldAccumulator();
    deposit(acc, 1, f32(2, [9, 9]));
    const r0 = streaming(acc, 0, f32(1, [1, 5]));
    r0.parser.push(r0.bytes.subarray(0, r0.bytes.length - 1)); // all but the last footer byte
    expect(Array.from(tensorValues(acc.result()!.tensors[0]))).toEqual([9, 9]);
    expect(acc.result()!.weight).toBe(2);
  });

  it('a deposit already merged stays when its rank dies afterwards', () => {
    const acc = new FoldAccumulator();
    deposit(acc, 0, f32(1, [1, 5]));
    acc.dropPending(0);
    deposit(acc, 1, f32(2, [9, 9]));
    expect(Array.from(tensorValues(acc.result()!.tensors[0]))).toEqual([10, 14]);
  });
});

describe('memory follows the bytes (issue 17.3)', () => {
  // A len prefix of 0x03ffffa7 bytes, a RoundFrame header and one f32 tensor of 16,777,184
  // elements (64 MiB) declared, and no tensor byte: 35 bytes.
  const HOSTILE = hexToBytes('a7ffff03f1170df10100000000000000000000f03f0001e0ffff0080ffff0300000000');

  it('the 35-byte frame costs no staging and no sums; its data costs at most one 1 MiB block beyond the bytes received', () => {
    const acc = new FoldAccumulator();
    let askedElements = 0;
    const kernel = getFoldKernel();
    setFoldKernel({
      ...kernel,
      name: 'counting',
      allocAccumulator: (n, u) => {
        askedElements += n;
        return kernel.allocAccumulator?.(n, u) ?? new Float32Array(n);
      },
    });
    const blocksBefore = stagedBlocksInUse();
    const ab = () =>
      (globalThis as { process?: { memoryUsage(): { arrayBuffers: number } } }).process?.memoryUsage()
        .arrayBuffers ?? 0;
    const abBefore = ab();
    try {
      let parser: RoundFrameStreamParser | null = null;
      const reader = new LenFrameReader({
        ceiling: 128 * 1024 * 1024,
        sink: {
          onStart: (len) => {
            parser = new RoundFrameStreamParser(mac, {
              totalLen: len,
              ceiling: 128 * 1024 * 1024,
              sink: acc.beginDeposit(0),
            });
          },
          onChunk: (b) => parser!.push(b),
          onEnd: () => parser!.end(),
        },
      });
      reader.push(HOSTILE);
      expect(stagedBlocksInUse() - blocksBefore).toBe(0);
      expect(askedElements).toBe(0);
      // Bytes that do arrive are staged block by block: 1 MiB + 1 byte takes two blocks.
      reader.push(new Uint8Array(STAGE_BLOCK_BYTES + 1));
      expect(stagedBlocksInUse() - blocksBefore).toBe(2);
      expect(askedElements).toBe(0);
      // Process-wide, the growth stays within the bytes received plus a block (and a block of slack for the test's own buffer).
      expect(ab() - abBefore).toBeLessThan(4 * STAGE_BLOCK_BYTES);
      acc.dropPending(0);
      expect(stagedBlocksInUse() - blocksBefore).toBe(0);
    } finally {
      setFoldKernel(kernel);
    }
  });
});

describe("memory follows the bytes, staged by reference (the relay's socket chunks)", () => {
  const HOSTILE = hexToBytes('a7ffff03f1170df10100000000000000000000f03f0001e0ffff0080ffff0300000000');

  it('the 35-byte frame and 1 MiB + 1 byte of its data take no block: the received chunk is held, nothing more', () => {
    const acc = new FoldAccumulator();
    const blocksBefore = stagedBlocksInUse();
    let parser: RoundFrameStreamParser | null = null;
    const reader = new LenFrameReader({
      ceiling: 128 * 1024 * 1024,
      sink: {
        onStart: (len) => {
          parser = new RoundFrameStreamParser(mac, {
            totalLen: len,
            ceiling: 128 * 1024 * 1024,
            sink: acc.beginDeposit(0, { byReference: true }),
          });
        },
        onChunk: (b) => parser!.push(b),
        onEnd: () => parser!.end(),
      },
    });
    reader.push(HOSTILE);
    const received = new Uint8Array(STAGE_BLOCK_BYTES + 1);
    reader.push(received);
    expect(stagedBlocksInUse() - blocksBefore).toBe(0);
    // A later write into the chunk would show in the deposit (it is held by reference, not copied);
    // the relay's chunks are socket buffers that nothing writes again.
    expect(acc.isPending(0)).toBe(true);
    acc.dropPending(0);
    expect(acc.isPending(0)).toBe(false);
    expect(stagedBlocksInUse() - blocksBefore).toBe(0);
    expect(acc.result()).toBeNull();
  });

  it('by reference or copied, a deposit that never verifies reaches no sum', () => {
    for (const byReference of [false, true]) {
      const acc = new FoldAccumulator();
      deposit(acc, 0, f32(1, [1, 5]));
      const forged = encodeRoundFrame(f32(2, [100, 100]), mac);
      forged[forged.length - 1] ^= 1; // its footer MAC fails
      const p = new RoundFrameStreamParser(mac, {
        totalLen: forged.length,
        sink: acc.beginDeposit(1, { byReference }),
      });
      expect(() => {
        p.push(forged);
        p.end();
      }).toThrow();
      acc.dropPending(1);
      deposit(acc, 2, f32(2, [9, 9]));
      expect(Array.from(tensorValues(acc.result()!.tensors[0]))).toEqual([10, 14]);
      expect(acc.mergeOrder).toEqual([0, 2]);
    }
  });
});

describe("flodl's arithmetic (issue 16.3-16.5, 16.7)", () => {
  it('bf16: host A 0x3F81 @ 1 + host B 0x4002 @ 2 gives 0x3F81 (three RNE roundings), not 0x3F82', () => {
    const host = (bits: number, w: number) =>
      model(w, [{ dtype: DTYPE_BF16, dims: [1], data: Uint8Array.of(bits & 0xff, bits >> 8) }]);
    const out = reduceRealizedWork([host(0x3f81, 1), host(0x4002, 2)]);
    expect(bitsOfBf16(out.tensors[0])).toEqual([0x3f81]);
    expect(out.weight).toBe(3);
  });

  it('one accepted frame is 0.0 + x at the controller: f32 -0.0 becomes +0.0, a signalling NaN is quieted', () => {
    const data = new Uint8Array(new Uint32Array([0x80000000, 0x7f800001, 0x3f800000]).buffer);
    const out = reduceRealizedWork([model(1, [{ dtype: DTYPE_F32, dims: [3], data }])]);
    const [z, nan, one] = bitsOfF32(out.tensors[0]);
    expect(z).toBe(0);
    expect(Number.isNaN(new Float32Array(new Uint32Array([nan]).buffer)[0])).toBe(true);
    expect(nan & 0x00400000).toBe(0x00400000);
    expect(one).toBe(0x3f800000);
  });

  it("the relay ships a single deposit verbatim (-0.0 stays), as flodl's seed", () => {
    const acc = new FoldAccumulator();
    const f = model(1, [
      { dtype: DTYPE_F32, dims: [1], data: new Uint8Array(new Uint32Array([0x80000000]).buffer) },
    ]);
    deposit(acc, 0, f);
    expect(bytesToHex(encodeRoundFrame(acc.result()!, mac))).toBe(bytesToHex(encodeRoundFrame(f, mac)));
  });

  it('promotion is of the whole frame: a tensor elided in every deposit ships as zeros (65-byte HostFrame, not 57)', () => {
    const frame = (w: number, x: number) =>
      model(w, [tensorFromValues(DTYPE_F32, [1], [x]), elidedTensor(DTYPE_F32, [2])]);
    const single = new FoldAccumulator();
    deposit(single, 0, frame(1, 3));
    expect(encodeRoundFrame(single.result()!, mac).length).toBe(57);
    const two = new FoldAccumulator();
    deposit(two, 0, frame(1, 3));
    deposit(two, 1, frame(2, 4));
    const out = two.result()!;
    expect(encodeRoundFrame(out, mac).length).toBe(65);
    expect(Array.from(tensorValues(out.tensors[0]))).toEqual([7]);
    expect(bitsOfF32(out.tensors[1])).toEqual([0, 0]);
  });

  it('dtype and byte count are checked at promotion, not on the first deposit', () => {
    const odd = model(1, [{ dtype: 7, dims: [2], data: new Uint8Array(8) }]);
    const single = new FoldAccumulator();
    deposit(single, 0, odd); // held as it came, shipped verbatim; the controller rejects it
    expect(bytesToHex(encodeRoundFrame(single.result()!, mac))).toBe(bytesToHex(encodeRoundFrame(odd, mac)));
    expect(() => reduceRealizedWork([odd])).toThrow(/dtype tag 7/);
    const two = new FoldAccumulator();
    deposit(two, 0, odd);
    expect(() => deposit(two, 1, odd)).toThrow(/dtype tag 7/);
    const short = new FoldAccumulator();
    deposit(short, 0, model(1, [{ dtype: DTYPE_F32, dims: [2], data: new Uint8Array(4) }]));
    expect(() => deposit(short, 1, f32(1, [1, 2]))).toThrow(/payload of 4 bytes does not match numel 2/);
  });
});
