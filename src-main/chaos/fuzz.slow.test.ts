// Fuzz of every decoder and the fold chain (issue 17 items 1 and 3): over a
// million mutated inputs, grown from the wire vectors and encoded frames
// (bit flips, byte overwrites, hostile lengths, truncation, insertion,
// splices), each given to every decoder whole and to the incremental readers
// in random chunks. Bad input must end in a named WireError, never another
// throw; and no input may make a reader or the fold hold more memory than
// the bytes it received plus 1 MiB (V8's external memory, where ArrayBuffers
// live, measured with the reader still alive; the fold's fuzzed deposit is
// measured on its own, after a verified one).
import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import vectors from '../../fixtures/wire-vectors.json';
import { hexToBytes } from '@shared/wire/bytes';
import { decodeControlFrame } from '@shared/wire/control-frame';
import { dissect } from '@shared/wire/dissect';
import { WireError } from '@shared/wire/errors';
import { nobleMac, type Mac } from '@shared/wire/mac';
import { decodeMuxRecord } from '@shared/wire/mux';
import { LenFrameReader, MuxReader } from '@shared/wire/readers';
import { encodeRoundFrame, tensorFromValues, type RoundFrame } from '@shared/wire/round-frame';
import { RoundFrameStreamParser } from '@shared/wire/round-frame-stream';
import { encodeLenFrame } from '@shared/wire/len-frame';
import { DTYPE_BF16, DTYPE_F32, ROUND_KIND_MODEL } from '@shared/wire/constants';
import { FoldAccumulator } from '@shared/fold';
import type { Layer } from '@shared/wire/units-json-types';
import { Rng } from './generate';
import { opaqueUnits } from '@shared/wire/opaque-units';
import { HUGE_ELIDED_FRAMES } from '@shared/fold/testing/huge-elided-frames';

const INPUTS = Number(process.env.CHAOS_FUZZ_INPUTS ?? 1_000_000);
const MIB = 1024 * 1024;
/**
 * What a reader costs whatever its input says: the stream parser's 1 KiB
 * scratch for fixed fields, MAC state, small buffers. Not driven by any
 * declared length, so it is allowed on top of the bound.
 */
const FIXED_BYTES = 4096;
/** issue 17 item 3: a RoundFrame header and one f32 tensor declaring about 16 M elements, in 35 bytes. */
const ISSUE17_FRAME = 'a7ffff03f1170df10100000000000000000000f03f0001e0ffff0080ffff0300000000';

interface Seed {
  layer: Layer;
  bytes: Uint8Array;
  mac: Mac;
}

const salt = hexToBytes('0102030405060708090a0b0c0d0e0f10');
const mac = nobleMac(salt);

function seeds(): Seed[] {
  const out: Seed[] = (vectors as { salt: string; hex: string; unit: { layer: string } }[]).map((v) => ({
    layer: v.unit.layer as Layer,
    bytes: hexToBytes(v.hex),
    mac: nobleMac(hexToBytes(v.salt)),
  }));
  const frame = (dtype: number, n: number, w: number): RoundFrame => ({
    roundKind: ROUND_KIND_MODEL,
    weight: w,
    tensors: [
      tensorFromValues(
        dtype,
        [n],
        Array.from({ length: n }, (_, i) => (i % 7) - 3),
      ),
      tensorFromValues(DTYPE_F32, [2, 3], [1, 2, 3, 4, 5, 6]),
    ],
  });
  for (const [dtype, n] of [
    [DTYPE_F32, 5],
    [DTYPE_BF16, 9],
    [DTYPE_F32, 300],
  ]) {
    const rf = encodeRoundFrame(frame(dtype, n, 2), mac);
    out.push({ layer: 'roundframe', bytes: rf, mac });
    out.push({ layer: 'lenframe', bytes: encodeLenFrame(rf), mac });
  }
  out.push({ layer: 'lenframe', bytes: hexToBytes(ISSUE17_FRAME), mac });
  // Issue 30 item 19: the pinned inputs grow mutants too (a CheckpointResult of each
  // wrapping, the huge elided frames as blobs and len-framed).
  for (const u of opaqueUnits(mac))
    if (u.name.includes('tail 10 v2')) out.push({ layer: u.layer, bytes: u.bytes, mac });
  for (const { frame } of HUGE_ELIDED_FRAMES) {
    const rf = encodeRoundFrame(frame, mac);
    out.push({ layer: 'roundframe', bytes: rf, mac });
    out.push({ layer: 'lenframe', bytes: encodeLenFrame(rf), mac });
  }
  return out;
}

const HOSTILE_U32 = [0xffffffff, 0x7fffffff, 0x01000000, 0x00ffffff, 0x80000000, 0, 1];

function mutate(rng: Rng, src: Uint8Array): Uint8Array {
  let b = new Uint8Array(src);
  const ops = 1 + (rng.next() % 3);
  for (let k = 0; k < ops; k++) {
    const at = b.length === 0 ? 0 : rng.next() % b.length;
    switch (rng.next() % 7) {
      case 0: // bit flip
        if (b.length) b[at] ^= 1 << (rng.next() % 8);
        break;
      case 1: // byte overwrite
        if (b.length) b[at] = rng.pick([0, 0xff, 0x7f, 0x80, rng.next() & 0xff]);
        break;
      case 2: {
        // hostile little-endian u32 (a length, count or dim)
        if (b.length >= 4) {
          const v = rng.pick(HOSTILE_U32);
          const p = Math.min(at, b.length - 4);
          b[p] = v & 0xff;
          b[p + 1] = (v >>> 8) & 0xff;
          b[p + 2] = (v >>> 16) & 0xff;
          b[p + 3] = v >>> 24;
        }
        break;
      }
      case 3: // truncate
        b = b.subarray(0, at);
        break;
      case 4: {
        // insert random bytes
        const n = 1 + (rng.next() % 16);
        const ins = Uint8Array.from({ length: n }, () => rng.next() & 0xff);
        const c = new Uint8Array(b.length + n);
        c.set(b.subarray(0, at));
        c.set(ins, at);
        c.set(b.subarray(at), at + n);
        b = c;
        break;
      }
      case 5: {
        // duplicate a slice (back-to-back units, repeated fields)
        const end = at + (rng.next() % Math.max(1, b.length - at + 1));
        const c = new Uint8Array(b.length + (end - at));
        c.set(b.subarray(0, end));
        c.set(b.subarray(at), end);
        b = c;
        break;
      }
      default: // delete a byte
        if (b.length) {
          const c = new Uint8Array(b.length - 1);
          c.set(b.subarray(0, at));
          c.set(b.subarray(at + 1), at);
          b = c;
        }
    }
  }
  return b;
}

/** Feeds `bytes` in random chunks. */
function chunks(rng: Rng, bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let p = 0; p < bytes.length;) {
    const n = 1 + (rng.next() % Math.max(1, Math.min(64, bytes.length)));
    out.push(bytes.subarray(p, p + n));
    p += n;
  }
  return out;
}

interface Tally {
  inputs: number;
  bytes: number;
  named: number;
  accepted: number;
  unnamed: { decoder: string; error: string; hex: string }[];
  worstGrowth: { decoder: string; growth: number; received: number; hex: string } | null;
  overBound: { decoder: string; growth: number; received: number; hex: string }[];
  per: Record<string, number>;
}

const hexOf = (b: Uint8Array) => Buffer.from(b.subarray(0, 96)).toString('hex');

const timeBy = new Map<string, number>();
function attempt(t: Tally, decoder: string, bytes: Uint8Array, f: () => unknown): void {
  const t0 = performance.now();
  try {
    f();
    t.accepted++;
  } catch (e) {
    if (e instanceof WireError) t.named++;
    else if (t.unnamed.length < 20) t.unnamed.push({ decoder, error: String(e), hex: hexOf(bytes) });
    else t.unnamed.length++;
  }
  timeBy.set(decoder, (timeBy.get(decoder) ?? 0) + performance.now() - t0);
}

/** Runs a streaming decoder and bounds the memory it holds after its input. */
function bounded(t: Tally, decoder: string, bytes: Uint8Array, f: () => unknown): void {
  const before = v8.getHeapStatistics().external_memory;
  let held: unknown;
  attempt(t, decoder, bytes, () => (held = f()));
  const growth = v8.getHeapStatistics().external_memory - before;
  const rec = { decoder, growth, received: bytes.length, hex: hexOf(bytes) };
  if (!t.worstGrowth || growth - bytes.length > t.worstGrowth.growth - t.worstGrowth.received)
    t.worstGrowth = rec;
  if (growth > bytes.length + MIB + FIXED_BYTES) t.overBound.push(rec);
  void held;
}

/** A valid frame deposited first, so a fuzzed deposit meets a fold already summing. */
const baseFrame = encodeRoundFrame(
  {
    roundKind: ROUND_KIND_MODEL,
    weight: 1,
    tensors: [
      tensorFromValues(DTYPE_F32, [5], [1, 2, 3, 4, 5]),
      tensorFromValues(DTYPE_F32, [2, 3], [1, 2, 3, 4, 5, 6]),
    ],
  },
  mac,
);

/** A fold that already holds one verified deposit (rank 0). */
function foldWithBase(): FoldAccumulator {
  const acc = new FoldAccumulator();
  new RoundFrameStreamParser(mac, { sink: acc.beginDeposit(0), totalLen: baseFrame.length }).push(baseFrame);
  return acc;
}

/** The fuzzed deposit (rank 1) streamed into the fold. */
function foldChain(rng: Rng, acc: FoldAccumulator, bytes: Uint8Array, m: Mac): FoldAccumulator {
  const p = new RoundFrameStreamParser(m, { sink: acc.beginDeposit(1), totalLen: bytes.length });
  for (const c of chunks(rng, bytes)) p.push(c);
  return acc;
}

/** The dissector never throws: a walk that did is reported in `failure`, counted here as an unnamed error. */
function dissected(layer: Layer, b: Uint8Array, m: Mac): unknown {
  const d = dissect(layer, b, { mac: m });
  if (d.failure) throw new Error(`dissector walk failed: ${d.failure}`);
  return d;
}

/** A frame deposited by two ranks (a promoted round), its result taken and re-encoded. */
function foldTwice(b: Uint8Array, m: Mac): void {
  const acc = new FoldAccumulator();
  for (const rank of [0, 1])
    new RoundFrameStreamParser(m, { sink: acc.beginDeposit(rank), totalLen: b.length }).push(b);
  const res = acc.result();
  if (res) encodeRoundFrame(res, m);
}

describe('fuzz: pinned inputs (issue 30 item 19)', () => {
  it('(a) every message with a field of unstated type: a verdict and no dissector failure', () => {
    for (const u of opaqueUnits(mac)) {
      const d = dissect(u.layer, u.bytes, { mac, indexTable: u.table });
      expect([u.name, d.failure, d.verdict]).toEqual([u.name, undefined, 'ok']);
    }
  });
  it('(b) frames of 69-141 bytes declaring ~1 GiB of elided zeros, folded twice: OVER_CEILING', () => {
    for (const { name, frame } of HUGE_ELIDED_FRAMES) {
      const b = encodeRoundFrame(frame, mac);
      let code: unknown = 'none';
      try {
        foldTwice(b, mac);
      } catch (e) {
        code = e instanceof WireError ? e.code : String(e);
      }
      expect([name, code]).toEqual([name, 'OVER_CEILING']);
    }
  });
});

describe('fuzz: every decoder and the fold chain', () => {
  it(
    `${INPUTS} mutated inputs: named errors only, memory bounded by the bytes received + 1 MiB`,
    { timeout: 1_800_000 },
    () => {
      const pool = seeds();
      const rng = new Rng(0x5eed17);
      const t: Tally = {
        inputs: 0,
        bytes: 0,
        named: 0,
        accepted: 0,
        unnamed: [],
        worstGrowth: null,
        overBound: [],
        per: {},
      };
      const started = Date.now();
      const byLayer = (...ls: Layer[]) => pool.filter((x) => ls.includes(x.layer));
      const any = pool;
      // Each input goes to one decoder, in turn, grown from the seeds of its layer (a
      // quarter from any layer: a reader must also survive another layer's bytes).
      const decoders: [string, Seed[], (bytes: Uint8Array, m: Mac, layer: Layer) => void][] = [
        [
          'decodeMuxRecord',
          byLayer('mux'),
          (b, m) => attempt(t, 'decodeMuxRecord', b, () => decodeMuxRecord(b, m)),
        ],
        [
          'decodeControlFrame',
          byLayer('controlframe'),
          (b, m) => attempt(t, 'decodeControlFrame', b, () => decodeControlFrame(b, m)),
        ],
        ['dissect', any, (b, m, layer) => attempt(t, 'dissect', b, () => dissected(layer, b, m))],
        [
          'MuxReader',
          byLayer('mux'),
          (b, m) =>
            bounded(t, 'MuxReader', b, () => {
              const r = new MuxReader({ mac: m });
              for (const c of chunks(rng, b)) r.push(c);
              r.end();
              return r;
            }),
        ],
        [
          'LenFrameReader',
          byLayer('lenframe', 'handshake'),
          (b) =>
            bounded(t, 'LenFrameReader', b, () => {
              const r = new LenFrameReader();
              for (const c of chunks(rng, b)) r.push(c);
              r.end();
              return r;
            }),
        ],
        [
          'RoundFrameStreamParser',
          byLayer('roundframe', 'lenframe'),
          (b, m) =>
            bounded(t, 'RoundFrameStreamParser', b, () => {
              const p = new RoundFrameStreamParser(m, { totalLen: b.length });
              for (const c of chunks(rng, b)) p.push(c);
              return p;
            }),
        ],
        [
          'FoldAccumulator',
          byLayer('roundframe', 'lenframe'),
          (b, m) => {
            const acc = foldWithBase();
            bounded(t, 'FoldAccumulator', b, () => foldChain(rng, acc, b, m));
          },
        ],
        [
          'FoldTwice',
          byLayer('roundframe', 'lenframe'),
          (b, m) => attempt(t, 'FoldTwice', b, () => foldTwice(b, m)),
        ],
      ];
      for (let i = 0; i < INPUTS; i++) {
        const [name, from, run] = decoders[i % decoders.length];
        const s = rng.chance(0.25) ? any[rng.next() % any.length] : from[rng.next() % from.length];
        // A len-framed RoundFrame goes to the parser and the fold as its blob (prefix stripped).
        const src = s.layer === 'lenframe' && name.startsWith('Round') ? s.bytes.subarray(4) : s.bytes;
        const srcFold = s.layer === 'lenframe' && name.startsWith('Fold') ? s.bytes.subarray(4) : src;
        // A tenth of the inputs are the seeds untouched (the accepting paths stay covered).
        const bytes = rng.chance(0.1) ? srcFold : mutate(rng, srcFold);
        t.inputs++;
        t.bytes += bytes.length;
        t.per[name] = (t.per[name] ?? 0) + 1;
        run(bytes, s.mac, s.layer);
      }
      const summary = {
        inputs: t.inputs,
        per: t.per,
        megabytes: +(t.bytes / MIB).toFixed(1),
        named: t.named,
        accepted: t.accepted,
        unnamed: t.unnamed.length,
        worstGrowth: t.worstGrowth,
        overBound: t.overBound.length,
        seconds: (Date.now() - started) / 1000,
        msBy: Object.fromEntries([...timeBy].map(([k, v]) => [k, Math.round(v)])),
      };
      process.stderr.write(`fuzz: ${JSON.stringify(summary)}\n`);
      expect(t.inputs).toBeGreaterThanOrEqual(INPUTS);
      expect(t.unnamed.slice(0, 5)).toEqual([]);
      expect(t.overBound.slice(0, 5)).toEqual([]);
      expect(t.accepted).toBeGreaterThan(0);
      expect(t.named).toBeGreaterThan(0);
    },
  );
});
