// 2. The relay's fold against Buffer.copy of the same bytes. The fold runs as
// in the relay's steady state: accumulators recycled across rounds
// (FoldRounds), so the sums' memory is warm like Buffer.copy's destination.
//
// Where the deposits' bytes lie decides the fold's cost. The relay's rank
// sockets read into the fold kernel's receive arena (arena-reads.ts), so the
// merge reads each deposit once, in place: `relayFold` (the headline `ratio`)
// has its deposits read into the arena in socket-sized reads beforehand, as
// the sockets would have (that copy is the kernel's recv, paid with or
// without the arena). The same fold from ordinary buffers (the fallback when
// the arena is full, or for a runtime without one), whole deposits, a fresh
// accumulator every round, and the streamed path with the MAC are beside it.
import { createHmac } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { FoldAccumulator, FoldRounds, getFoldKernel, receiveArena } from '@shared/fold';
import { ArenaReader, type ReceiveArena } from '@shared/fold/receive-arena';
import { DTYPE_BF16, DTYPE_F32, deriveFrameCeiling } from '@shared/wire/constants';
import { encodeRoundFrame, type RoundFrame } from '@shared/wire/round-frame';
import { RoundFrameStreamParser } from '@shared/wire/round-frame-stream';
import { saltFromHex } from '@shared/wire/salt';
import { nodeMac } from '../../crypto/node-mac';
import { modelFrame } from './model-frame';

const SALT = saltFromHex('42'.repeat(16));
/** A socket read's size: what Node reads at once into an ordinary buffer. */
const READ_BYTES = 64 * 1024;

/**
 * Best-of-n timings of several functions measured in alternation (a, b, c,
 * a, b, c, ...), so that load from other processes on a shared machine hits
 * every figure alike instead of whichever ran during a busy second.
 */
function bestAlternating(n: number, fs: Record<string, () => void>): Record<string, number> {
  const min: Record<string, number> = {};
  for (const k of Object.keys(fs)) min[k] = Infinity;
  for (let i = 0; i < n; i++) {
    for (const [k, f] of Object.entries(fs)) {
      const t0 = performance.now();
      f();
      min[k] = Math.min(min[k], performance.now() - t0);
    }
  }
  return min;
}

/** A deposit as a socket delivers it: the header, then each tensor's payload in pieces. */
interface PiecedFrame {
  roundKind: number;
  weight: number;
  tensors: { dtype: number; dims: number[]; nbytes: number; pieces: Uint8Array[] }[];
}

/** Feeds `frames` into `acc` as streamed deposits, the K deposits' pieces interleaved round-robin as K sockets deliver them. */
export function foldPieces(acc: FoldAccumulator, frames: PiecedFrame[]): void {
  const sinks = frames.map((f, r) => {
    // Staged by reference, as the relay stages its sockets' chunks.
    const sink = acc.beginDeposit(r, { byReference: true });
    sink.onHeader!({ roundKind: f.roundKind, weight: f.weight, numTensors: f.tensors.length });
    return { sink, f, t: -1, p: 0, o: 0 };
  });
  let open = sinks.length;
  while (open > 0) {
    open = 0;
    for (const d of sinks) {
      const { sink, f } = d;
      if (d.t >= f.tensors.length) continue;
      const cur = d.t >= 0 ? f.tensors[d.t] : null;
      if (!cur || d.p >= cur.pieces.length) {
        d.t++;
        d.p = d.o = 0;
        if (d.t === f.tensors.length) {
          sink.onComplete!({ tag: new Uint8Array(8), wireLen: 0 });
          continue;
        }
        const t = f.tensors[d.t];
        sink.onTensor!({ index: d.t, dtype: t.dtype, dims: t.dims, nbytes: t.nbytes });
      } else {
        const piece = cur.pieces[d.p++];
        sink.onData!(d.t, d.o, piece);
        d.o += piece.length;
      }
      open++;
    }
  }
}

/** `bytes` as views of at most `chunk` bytes each. */
function cut(bytes: Uint8Array, chunk: number): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  for (let o = 0; o < bytes.length; o += chunk)
    pieces.push(bytes.subarray(o, Math.min(bytes.length, o + chunk)));
  return pieces;
}

/** `frames` cut into `chunk`-byte pieces of their own memory. */
function pieced(frames: RoundFrame[], chunk: number): PiecedFrame[] {
  return frames.map((f) => ({
    roundKind: f.roundKind,
    weight: f.weight,
    tensors: f.tensors.map((t) => ({
      dtype: t.dtype,
      dims: t.dims,
      nbytes: t.data?.length ?? 0,
      pieces: t.data ? cut(t.data, chunk) : [],
    })),
  }));
}

/** Feeds whole tensors of `frames` into `acc`, the K deposits' `chunk`-byte pieces interleaved. */
export function foldInterleaved(acc: FoldAccumulator, frames: RoundFrame[], chunk: number): void {
  foldPieces(acc, pieced(frames, chunk));
}

/**
 * Each encoded frame read into the arena as a rank socket reads it
 * (READ_BYTES at a time, ArenaReader), parsed into its payload pieces (views
 * of the arena) and the wire chunks. The bench holds every piece's block
 * (released by the returned function), as the sockets' bytes stay put.
 */
function readDepositsIntoArena(
  arena: ReceiveArena,
  encoded: Uint8Array[],
  ceiling: number,
  mac: ReturnType<typeof nodeMac>,
) {
  const held: Uint8Array[] = [];
  const wire: Uint8Array[][] = [];
  const frames = encoded.map((bytes) => {
    const reader = new ArenaReader(arena);
    const chunks: Uint8Array[] = [];
    for (let o = 0; o < bytes.length;) {
      const space = reader.space();
      const n = Math.min(READ_BYTES, space.length, bytes.length - o);
      space.set(bytes.subarray(o, o + n));
      const chunk = reader.filled(space, n);
      if (arena.retain(chunk)) held.push(chunk);
      chunks.push(chunk);
      o += n;
    }
    reader.close();
    wire.push(chunks);
    const f: PiecedFrame = { roundKind: 0, weight: 1, tensors: [] };
    const p = new RoundFrameStreamParser(mac, {
      ceiling,
      sink: {
        onTensor: (t) => void f.tensors.push({ dtype: t.dtype, dims: t.dims, nbytes: t.nbytes, pieces: [] }),
        onData: (i, _o, b) => void f.tensors[i].pieces.push(b),
      },
    });
    for (const c of chunks) p.push(c);
    p.end();
    return f;
  });
  return { frames, wire, release: () => held.forEach((c) => arena.release(c)) };
}

export function benchFold(bytesPerFrame: number, frames: number, reps = 7, dtype = DTYPE_F32) {
  const mac = nodeMac(SALT);
  const encoded = Array.from({ length: frames }, (_, r) =>
    encodeRoundFrame(modelFrame(bytesPerFrame, 1, r, dtype), mac),
  );
  const ceiling = deriveFrameCeiling(bytesPerFrame);
  const total = encoded.reduce((a, f) => a + f.length, 0);
  const dst = Buffer.allocUnsafe(Math.max(...encoded.map((f) => f.length)));
  // The deposits' tensors as the parser hands them over from ordinary buffers (data at the frame's own, unaligned offsets).
  const decoded = encoded.map((f) => {
    const parts: { dtype: number; dims: number[]; pieces: Uint8Array[] }[] = [];
    const p = new RoundFrameStreamParser(mac, {
      ceiling,
      sink: {
        onTensor: (t) => void parts.push({ dtype: t.dtype, dims: t.dims, pieces: [] }),
        onData: (i, _o, b) => void parts[i].pieces.push(b),
      },
    });
    p.push(f);
    p.end();
    const tensors = parts.map(({ dtype, dims, pieces }) => ({
      dtype,
      dims,
      data:
        pieces.length === 0 ? null : pieces.length === 1 ? pieces[0] : Uint8Array.from(Buffer.concat(pieces)),
    }));
    return { roundKind: 0, weight: 1, tensors } as RoundFrame;
  });
  const heapPieces = pieced(decoded, READ_BYTES);
  const arena = receiveArena();
  const resident = arena ? readDepositsIntoArena(arena, encoded, ceiling, mac) : null;
  const heapWire = encoded.map((f) => cut(f, READ_BYTES));
  const relayWire = resident?.wire ?? heapWire;
  const rounds = {
    relay: new FoldRounds(),
    heap: new FoldRounds(),
    whole: new FoldRounds(),
    mac: new FoldRounds(),
  };
  try {
    const t = bestAlternating(reps, {
      copy: () => {
        for (const f of encoded) Buffer.from(f.buffer, f.byteOffset, f.length).copy(dst);
      },
      // The relay's fold alone (no MAC): the deposits where its sockets put them, pieces interleaved across ranks.
      relayFold: () => {
        const acc = rounds.relay.next();
        foldPieces(acc, resident?.frames ?? heapPieces);
        acc.result();
      },
      // The same from ordinary buffers: the merge copies every piece into its slots first.
      heapFold: () => {
        const acc = rounds.heap.next();
        foldPieces(acc, heapPieces);
        acc.result();
      },
      // Whole decoded deposits (one piece per tensor) from ordinary buffers.
      wholeFold: () => {
        const acc = rounds.whole.next();
        decoded.forEach((f, i) => acc.deposit(i, f, { byReference: true }));
        acc.result();
      },
      // A fresh accumulator every round: what the fold cost before the relay recycled its memory.
      freshFold: () => {
        const acc = new FoldAccumulator();
        decoded.forEach((f, i) => acc.deposit(i, f));
        acc.result();
      },
      hmac: () => {
        for (const f of encoded) createHmac('sha256', SALT).update(f).digest();
      },
      // The relay's own path: every deposit streamed through the parser (MAC included), reads interleaved.
      relayWithMac: () => {
        const acc = rounds.mac.next();
        const ps = encoded.map(
          (f, r) =>
            new RoundFrameStreamParser(mac, {
              ceiling,
              totalLen: f.length,
              sink: acc.beginDeposit(r, { byReference: true }),
            }),
        );
        const at = relayWire.map(() => 0);
        for (let open = relayWire.length; open > 0;) {
          open = 0;
          relayWire.forEach((chunks, r) => {
            if (at[r] < chunks.length) ps[r].push(chunks[at[r]++]);
            if (at[r] < chunks.length) open++;
          });
        }
        ps.forEach((p) => p.end());
        acc.result();
      },
    });
    return {
      frames,
      bytesPerFrame,
      dtype: dtype === DTYPE_BF16 ? 'bf16' : 'f32',
      totalBytes: total,
      kernel: getFoldKernel().name,
      // Where the relay's deposits lie: 'receive-arena' (read in place) or 'buffers' (copied into the merge's slots).
      deposits: resident ? 'receive-arena' : 'buffers',
      copyMs: t.copy,
      foldMs: t.relayFold,
      ratio: t.copy / t.relayFold,
      target: dtype === DTYPE_BF16 ? 0.5 : 0.8,
      relayFoldMs: t.relayFold,
      relayFoldRatio: t.copy / t.relayFold,
      buffersFoldMs: t.heapFold,
      buffersFoldRatio: t.copy / t.heapFold,
      wholeDepositFoldMs: t.wholeFold,
      wholeDepositRatio: t.copy / t.wholeFold,
      freshAccumulatorFoldMs: t.freshFold,
      freshAccumulatorRatio: t.copy / t.freshFold,
      relayStreamedWithMacMs: t.relayWithMac,
      relayStreamedRatioToCopyPlusHmac: (t.copy + t.hmac) / t.relayWithMac,
    };
  } finally {
    resident?.release();
    // Hands the last rounds' memory and arena blocks back (both of each ring's accumulators).
    for (const r of Object.values(rounds)) {
      r.next();
      r.next();
    }
  }
}
