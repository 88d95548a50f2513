// Seeded fuzz of the streamed fold as a relay feeds it: K deposits of one
// round, each cut into random chunks (even inside an element) and delivered
// interleaved in random order, as K rank sockets deliver them; random dtypes,
// shapes, elisions and deaths (a rank dead before it sends deposits nothing;
// a rank dropped mid-frame with dropPending deposits nothing; a rank dropped
// after its deposit keeps it, WIRE.md 4.4). The result is compared byte for
// byte with a from-scratch flodl HostFold (testing/flodl-reference.ts) of the
// completed deposits in the order they completed, with both fold kernels.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytesToHex } from '../wire/bytes';
import { DTYPE_BF16, DTYPE_F32 } from '../wire/constants';
import { nobleMac } from '../wire/mac';
import { encodeRoundFrame, type RoundFrame } from '../wire/round-frame';
import { RoundFrameStreamParser } from '../wire/round-frame-stream';
import { elidedTensor, tensorFromValues } from '../wire/tensor';
import { FoldAccumulator, getFoldKernel, setFoldKernel } from './index';
import { jsFoldKernel, type FoldKernel } from './kernel';
import { bestFoldKernel, createWasmFoldKernel } from './kernel-wasm';
import { ArenaReader } from './receive-arena';
import { setMinReferencedBytes } from './staging';
import { hostFoldReference } from './testing/flodl-reference';

const KERNELS: FoldKernel[] = [jsFoldKernel, bestFoldKernel()];
// A kernel whose receive arena has 3 blocks: deposits read into it (as a relay's sockets read) are
// merged in place, and once the blocks are all lent, reads fall back to ordinary buffers (mixed).
const arenaKernel = createWasmFoldKernel({ arenaBytes: 6 << 20 })!;
const arena = arenaKernel.receiveArena!()!;
function withKernel<T>(k: FoldKernel, f: () => T): T {
  const before = getFoldKernel();
  setFoldKernel(k);
  try {
    return f();
  } finally {
    setFoldKernel(before);
  }
}

const mac = nobleMac(new Uint8Array(16).fill(0x5a));

/** mulberry32: a small seeded generator, so that a failing seed replays exactly. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return { next, int: (n: number) => Math.floor(next() * n), chance: (p: number) => next() < p };
}

interface Scenario {
  /** Every rank's frame, by rank. */
  frames: RoundFrame[];
  /** Ranks dead before sending: they deposit nothing. */
  deadBefore: Set<number>;
  /** Ranks dropped (dropPending) after this many bytes of their frame: they deposit nothing. */
  dieAt: Map<number, number>;
  /** Ranks dropped once their deposit completed: it stays. */
  dropAfter: Set<number>;
  /** Max chunk size per rank (1 = byte by byte). */
  maxChunk: number[];
}

function scenario(seed: number): Scenario {
  const r = prng(seed);
  const ranks = 1 + r.int(5);
  const roundKind = r.int(2);
  const allBf16 = r.chance(0.4);
  const tensors = Array.from({ length: 1 + r.int(3) }, () => {
    const dims = r.chance(0.05) ? [0] : Array.from({ length: 1 + r.int(2) }, () => 1 + r.int(9));
    return { dtype: allBf16 || r.chance(0.2) ? DTYPE_BF16 : DTYPE_F32, dims };
  });
  const value = () => {
    const k = r.int(10);
    if (k === 0) return -0;
    if (k === 1) return 0;
    if (k === 2) return r.int(64) - 32;
    return (r.next() * 2 - 1) * 10 ** (r.int(7) - 3);
  };
  const frames = Array.from({ length: ranks }, (): RoundFrame => {
    const idle = r.chance(0.15); // a mass-0 rank: every tensor elided
    return {
      roundKind,
      weight: idle ? 0 : r.int(4) + r.next(),
      tensors: tensors.map(({ dtype, dims }) =>
        idle || r.chance(0.25)
          ? elidedTensor(dtype, dims)
          : tensorFromValues(dtype, dims, Array.from({ length: dims.reduce((a, b) => a * b, 1) }, value)),
      ),
    };
  });
  const deadBefore = new Set<number>();
  for (let k = 0; k < ranks; k++) if (r.chance(0.15)) deadBefore.add(k);
  if (deadBefore.size === ranks) deadBefore.delete(r.int(ranks));
  const dieAt = new Map<number, number>();
  const dropAfter = new Set<number>();
  for (let k = 0; k < ranks; k++) {
    if (deadBefore.has(k)) continue;
    const roll = r.next();
    if (roll < 0.15) dieAt.set(k, r.int(encodeRoundFrame(frames[k], mac).length));
    else if (roll < 0.3) dropAfter.add(k);
  }
  const maxChunk = frames.map(() => [1, 3, 7, 16, 64, 4096][r.int(6)]);
  return { frames, deadBefore, dieAt, dropAfter, maxChunk };
}

/**
 * Streams the live ranks' frames into one accumulator, interleaved at random.
 * Returns the result and the ranks in completion order.
 */
function runStreamed(
  seed: number,
  s: Scenario,
  acc = new FoldAccumulator(),
  byReference = false,
  intoArena = false,
) {
  const r = prng(seed ^ 0x5bd1e995);
  const streams = s.frames
    .map((f, rank) => ({
      rank,
      bytes: encodeRoundFrame(f, mac),
      off: 0,
      reader: intoArena ? new ArenaReader(arena) : null,
    }))
    .filter((x) => !s.deadBefore.has(x.rank))
    .map((x) => ({
      ...x,
      parser: new RoundFrameStreamParser(mac, {
        totalLen: x.bytes.length,
        sink: acc.beginDeposit(x.rank, { byReference }),
      }),
    }));
  const order: number[] = [];
  let open = streams.filter((x) => x.bytes.length > 0);
  while (open.length > 0) {
    const st = open[r.int(open.length)];
    const n = 1 + r.int(s.maxChunk[st.rank]);
    const dieAt = s.dieAt.get(st.rank);
    let end = Math.min(st.bytes.length, st.off + n, dieAt ?? Infinity);
    if (st.reader) {
      // A socket read into the arena: as much as the reader's space holds, a view valid during the push.
      const space = st.reader.space();
      end = Math.min(end, st.off + space.length);
      space.set(st.bytes.subarray(st.off, end));
      st.parser.push(st.reader.filled(space, end - st.off));
    } else st.parser.push(st.bytes.subarray(st.off, end));
    st.off = end;
    if (st.off === end && (st.off === dieAt || st.off === st.bytes.length)) st.reader?.close();
    if (st.off === dieAt) {
      acc.dropPending(st.rank); // died mid-frame: nothing of it may reach the sums
      open = open.filter((x) => x !== st);
    } else if (st.off === st.bytes.length) {
      st.parser.end();
      order.push(st.rank);
      if (s.dropAfter.has(st.rank)) acc.dropPending(st.rank); // its merged deposit stays
      open = open.filter((x) => x !== st);
    }
  }
  return { result: acc.result(), order, acc };
}

/** Byte-for-byte comparison with flodl's HostFold of the completed deposits in completion order; a description or null. */
function difference(
  s: Scenario,
  got: RoundFrame | null,
  order: number[],
  acc: FoldAccumulator,
): string | null {
  if (order.join() !== acc.mergeOrder.join())
    return `merge order ${acc.mergeOrder} != completion order ${order}`;
  if (order.length === 0) return got === null ? null : 'a result without deposits';
  const want = hostFoldReference(order.map((k) => s.frames[k]));
  if (got === null) return 'no result';
  const [g, w] = [bytesToHex(encodeRoundFrame(got, mac)), bytesToHex(encodeRoundFrame(want, mac))];
  return g === w ? null : `frame ${g} != ${w}`;
}

function check(seed: number): string | null {
  const s = scenario(seed);
  for (const k of KERNELS) {
    // Staged by copy, and by reference with every piece of 2 bytes or more kept as a view (both paths mixed).
    for (const byReference of [false, true]) {
      const was = setMinReferencedBytes(2);
      try {
        const { result, order, acc } = withKernel(k, () => runStreamed(seed, s, undefined, byReference));
        const d = difference(s, result, order, acc);
        if (d) return `${k.name}${byReference ? ' (by reference)' : ''}: ${d}`;
      } finally {
        setMinReferencedBytes(was);
      }
    }
  }
  // Read into the arena, staged by reference (every piece of 2 bytes or more kept as a view of its block).
  const was = setMinReferencedBytes(2);
  try {
    const { result, order, acc } = withKernel(arenaKernel, () => runStreamed(seed, s, undefined, true, true));
    const d = difference(s, result, order, acc);
    if (d) return `receive arena: ${d}`;
    acc.reset();
    if (arena.blocksInUse !== 0) return `receive arena: ${arena.blocksInUse} blocks still lent after reset()`;
  } finally {
    setMinReferencedBytes(was);
  }
  return null;
}

/** Seeds whose interleavings broke the fold that promoted its seed without its writer's progress (kept as regressions). */
const PINNED_SEEDS = [1, 3, 30, 41, 43, 141, 167, 170];

describe('streamed fold, interleaved deposits (seeded fuzz)', () => {
  it.each(PINNED_SEEDS)('pinned seed %i folds as flodl does', (seed) => {
    expect(check(seed)).toBeNull();
  });

  it('random interleavings, chunk splits, dtypes, elisions and deaths fold as flodl does, byte for byte', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), (seed) => check(seed) === null),
      { numRuns: 400, seed: 20261129 },
    );
  });

  it('a round reused after reset() is exact, and a deposit still streaming from the old round merges nothing', () => {
    const acc = new FoldAccumulator();
    const s = scenario(11);
    const bytes = encodeRoundFrame(s.frames[0], mac);
    const late = new RoundFrameStreamParser(mac, { totalLen: bytes.length, sink: acc.beginDeposit(99) });
    late.push(bytes.subarray(0, bytes.length >> 1)); // a rank that dies mid-frame while the round ships
    acc.reset();
    late.push(bytes.subarray(bytes.length >> 1));
    late.end();
    for (let seed = 100; seed < 110; seed++) {
      const sc = scenario(seed);
      const { result, order } = runStreamed(seed, sc, acc);
      expect(difference(sc, result, order, acc)).toBeNull();
      expect(acc.ranks).not.toContain(99);
      acc.reset();
    }
  });

  it('a second deposit reaching a tensor before the first deposit does is the one the other is checked against (no crash)', () => {
    const mk = (w: number, v: number[]) => ({
      roundKind: 0,
      weight: w,
      tensors: [tensorFromValues(DTYPE_F32, [2], [w, w]), tensorFromValues(DTYPE_F32, [v.length], v)],
    });
    const [a, b] = [encodeRoundFrame(mk(1, [1, 2]), mac), encodeRoundFrame(mk(2, [3, 4, 5]), mac)];
    const acc = new FoldAccumulator();
    const pa = new RoundFrameStreamParser(mac, { totalLen: a.length, sink: acc.beginDeposit(0) });
    const pb = new RoundFrameStreamParser(mac, { totalLen: b.length, sink: acc.beginDeposit(1) });
    pa.push(a.subarray(0, 20)); // a's header and part of its first tensor
    pb.push(b); // b reaches tensor 1 first: its shape is the round's
    expect(() => pa.push(a.subarray(20))).toThrow(
      /tensor 1: shape \[2\] from rank 0 differs from the round's \[3\]/,
    );
  });
});

describe('relay fold, moved from the engine (interleaved deposits, one elided rank)', () => {
  // The engine's original property, pointed at the shared accumulator; its counterexample is pinned.
  function frames(seed: number, ranks: number, dtype: number, elidedRank: number): RoundFrame[] {
    let x = seed >>> 0;
    const rnd = () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 8 - 4;
    const shapes = [[7, 5], [13], [2, 3, 2]];
    return Array.from({ length: ranks }, (_, r) => ({
      roundKind: 0,
      weight: r + 1,
      tensors: shapes.map((dims) =>
        r === elidedRank
          ? elidedTensor(dtype, dims)
          : tensorFromValues(dtype, dims, Array.from({ length: dims.reduce((a, b) => a * b, 1) }, rnd)),
      ),
    }));
  }

  it('interleaved, arbitrarily chunked deposits fold as flodl does, in merge order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom(DTYPE_F32, DTYPE_BF16),
        fc.integer({ min: -1, max: 3 }),
        (seed, ranks, dtype, elided) => {
          const input = frames(seed, ranks, dtype, elided);
          const acc = new FoldAccumulator();
          let x = seed ^ 0x9e3779b9;
          const rnd = (n: number) => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) % n;
          const streams = input.map((f, r) => {
            const bytes = encodeRoundFrame(f, mac);
            return {
              bytes,
              off: 0,
              parser: new RoundFrameStreamParser(mac, { totalLen: bytes.length, sink: acc.beginDeposit(r) }),
            };
          });
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
          const got = acc.result()!;
          expect(acc.ranks).toEqual(input.map((_, r) => r));
          const want = hostFoldReference(acc.mergeOrder.map((r) => input[r]));
          expect(bytesToHex(encodeRoundFrame(got, mac))).toBe(bytesToHex(encodeRoundFrame(want, mac)));
        },
      ),
      { numRuns: 200, seed: 7, examples: [[0, 3, DTYPE_F32, 0]] },
    );
  });

  it('rejects a second deposit of one rank and a dtype mix, naming bf16_wire', () => {
    const acc = new FoldAccumulator();
    acc.beginDeposit(0);
    expect(() => acc.beginDeposit(0)).toThrow(/deposited twice/);
    const b = new FoldAccumulator();
    const [f32, bf16] = [frames(1, 1, DTYPE_F32, -1)[0], frames(1, 1, DTYPE_BF16, -1)[0]];
    new RoundFrameStreamParser(mac, { sink: b.beginDeposit(0) }).push(encodeRoundFrame(f32, mac));
    expect(() =>
      new RoundFrameStreamParser(mac, { sink: b.beginDeposit(1) }).push(encodeRoundFrame(bf16, mac)),
    ).toThrow(/bf16_wire/);
  });
});
