// The relay's and the controller's fold (WIRE.md 4.4, 4.5): element-wise sums
// accumulated in f32 whatever the wire dtype, masses summed in f64, never a
// divide; zero-elision aware (elided + elided = elided). The first full
// payload of a tensor is held verbatim as the seed, so a single-deposit round
// ships byte-identical payloads; a second full payload promotes the tensor to
// an f32 sum starting from +0.0 (seed first, then arrival order). For f32 the
// seed is copied straight into the accumulator and the first add onto it is
// (seed + 0) + x, which gives the same bits with one pass less.
//
// Deposits stream: beginDeposit returns a RoundFrameSink that merges payload
// bytes as they arrive (before the footer MAC; safe only because any error
// tears the channel down, the "MAC-before-use" note). Mass and the rank's
// deposit count only once the footer verified. After an error the
// accumulator is poisoned and every further call rethrows it.
//
// Deposits may also stream interleaved (a relay reads K rank sockets whose
// chunks arrive in any order), so a second deposit can reach a tensor while
// the seed's own bytes are still arriving. Every deposit therefore merges
// through a per-tensor Writer that records how many whole elements it has
// merged (a deposit's bytes arrive in order, so that is a prefix) and looks
// its target up at merge time. Promotion uses the seed's merged prefix only
// and turns the seed's writer into an adder, so the seed's remaining bytes
// add into the sums instead of landing in a discarded seed.
//
// Memory: sums, bf16 seeds and re-encoded bf16 sums live in the fold
// kernel's recycled memories (a fresh model-sized buffer page-faults on first
// touch, which cost more than the fold itself); result() returns views of
// them, valid until reset(). FoldRounds (fold-rounds.ts) delays that reset by
// a round for the relay, whose HostFrame is still being sent.
import { DTYPE_BF16, DTYPE_F32, ROUND_KIND_CONTROL, ROUND_KIND_MODEL } from './wire/constants';
import { WireError } from './wire/errors';
import type { RoundFrame } from './wire/round-frame';
import type { RoundFrameSink } from './wire/round-frame-stream';
import {
  LITTLE_ENDIAN_HOST,
  dtypeName,
  elementSize,
  encodeValues,
  numel,
  tensorValues,
  type TensorEntry,
} from './wire/tensor';
import {
  allocAccumulator,
  getFoldKernel,
  isFoldKernelChosen,
  releaseAccumulator,
  setFoldKernel,
} from './fold-kernel';
import { bestFoldKernel } from './fold-kernel-wasm';
import { encodeBf16Sums } from './fold-encode';

// Use the SIMD kernel where the runtime has it, unless a kernel was chosen explicitly.
if (!isFoldKernelChosen()) setFoldKernel(bestFoldKernel(), false);

type TensorState =
  | { kind: 'elided' }
  /** bf16 seed: the first full payload verbatim (an f32 accumulator could not give its bytes back exactly). */
  | { kind: 'seed'; bytes: Uint8Array }
  /**
   * f32 sums. With one full deposit the accumulator holds that payload's exact
   * bits (the f32 seed, copied straight in); the second deposit adds onto it
   * "from zero", (seed + 0) + x, which is flodl's promotion from +0.0.
   * `deposits` counts the full payloads that started merging.
   */
  | { kind: 'sum'; acc: Float32Array; deposits: number };

/**
 * How a writer's bytes merge: 'copy' = verbatim (into the bf16 seed, or the
 * f32 seed into the accumulator), 'add' = onto the sums, 'addFromZero' = the
 * first add onto an f32 seed.
 */
type MergeMode = 'copy' | 'add' | 'addFromZero';

/** One deposit's full payload of one tensor, as it streams in. */
interface Writer {
  readonly index: number;
  readonly dtype: number;
  readonly size: number;
  readonly numel: number;
  mode: MergeMode;
  /** Whole elements merged so far: elements [0, next) are in. */
  next: number;
  /** The bytes of a partial element carried to the next chunk. */
  readonly carry: Uint8Array;
  carryLen: number;
}

interface Schema {
  dtype: number;
  dims: number[];
  numel: number;
}

/** A folded tensor as f32 values (null: elided), for callers that scale or inspect the sums. */
export interface FoldedTensor {
  dtype: number;
  dims: number[];
  values: Float32Array | null;
}

const kindName = (k: number) =>
  k === ROUND_KIND_MODEL ? 'Model' : k === ROUND_KIND_CONTROL ? 'Control' : `kind ${k}`;
const shape = (d: number[]) => `[${d.join(', ')}]`;

function foldError(message: string): WireError {
  return new WireError('BAD_PAYLOAD', message);
}

export class FoldAccumulator {
  private roundKindValue: number | null = null;
  private tensorCount = 0;
  /** Per tensor, set by whichever deposit reaches that tensor first. */
  private schema: Array<Schema | undefined> = [];
  private states: TensorState[] = [];
  /** Per tensor, the writer of the seed while the tensor has a single full payload. */
  private seedWriters: Array<Writer | null> = [];
  private massValue = 0;
  private readonly deposited = new Set<number>();
  private readonly inFlight = new Set<number>();
  private failure: WireError | null = null;
  /** Bumped by reset(): sinks of an earlier round are ignored from then on. */
  private generation = 0;
  /** Kernel memory lent to this round besides the sums (bf16 seeds and re-encoded sums), returned at reset(). */
  private lent: Float32Array[] = [];
  /** Set by result()/sums(): what they returned may be in use, so nothing merges any more until reset(). */
  private sealed = false;

  /** Ranks whose deposit completed this round. */
  get ranks(): number[] {
    return [...this.deposited].sort((a, b) => a - b);
  }

  get depositCount(): number {
    return this.deposited.size;
  }

  /** Sum of the deposited masses (f64). */
  get mass(): number {
    return this.massValue;
  }

  get roundKind(): number | null {
    return this.roundKindValue;
  }

  hasDeposited(rank: number): boolean {
    return this.deposited.has(rank);
  }

  /**
   * Starts the next round. The sums go back to the kernel for reuse: the
   * caller must be done with what result() returned (FoldRounds keeps them
   * for a round or two). A deposit of the finished round that is still
   * streaming (a rank that died mid-frame) merges nothing from now on.
   */
  reset(): void {
    for (const st of this.states) if (st.kind === 'sum') releaseAccumulator(st.acc);
    for (const m of this.lent) releaseAccumulator(m);
    this.lent = [];
    this.roundKindValue = null;
    this.tensorCount = 0;
    this.schema = [];
    this.states = [];
    this.seedWriters = [];
    this.massValue = 0;
    this.deposited.clear();
    this.inFlight.clear();
    this.failure = null;
    this.generation++;
    this.sealed = false;
  }

  private guard<T>(f: () => T): T {
    if (this.failure) throw this.failure;
    try {
      return f();
    } catch (e) {
      if (e instanceof WireError) this.failure = e;
      throw e;
    }
  }

  /** A whole decoded frame from `rank` (through the same checks as a streamed deposit). */
  deposit(rank: number, frame: RoundFrame): void {
    const sink = this.beginDeposit(rank);
    sink.onHeader!({ roundKind: frame.roundKind, weight: frame.weight, numTensors: frame.tensors.length });
    frame.tensors.forEach((t, index) => {
      const nbytes = t.data === null ? 0 : t.data.length;
      sink.onTensor!({ index, dtype: t.dtype, dims: t.dims, nbytes });
      if (t.data && nbytes) sink.onData!(index, 0, t.data);
    });
    sink.onComplete!({ tag: new Uint8Array(8), wireLen: 0 });
  }

  /**
   * A sink for RoundFrameStreamParser: validates against the round's first
   * deposit and merges bytes per chunk; commits on onComplete (after the MAC).
   * Several sinks may be fed interleaved, chunk by chunk.
   */
  beginDeposit(rank: number): RoundFrameSink {
    if (this.sealed) throw new Error('fold: the round was already taken; reset() before the next deposit');
    this.guard(() => {
      if (this.deposited.has(rank) || this.inFlight.has(rank)) {
        throw foldError(`rank ${rank} deposited twice in one round (ping-pong violated)`);
      }
      this.inFlight.add(rank);
    });
    const generation = this.generation;
    // A deposit still streaming when the round is taken (a rank that died
    // mid-frame) merges nothing more: the shipped sums must not change under the writer.
    const live = () => generation === this.generation && !this.sealed;
    let weight = 0;
    let numTensors = 0;
    let tensorsSeen = 0;
    let tensorIndex = -1;
    /** The current tensor's writer; null when its payload is elided or empty. */
    let writer: Writer | null = null;

    return {
      onHeader: (h) =>
        this.guard(() => {
          if (!live()) return;
          weight = h.weight;
          numTensors = h.numTensors;
          if (this.roundKindValue === null) {
            this.roundKindValue = h.roundKind;
            this.tensorCount = h.numTensors;
          } else if (h.roundKind !== this.roundKindValue) {
            throw foldError(
              `desynced reduce rounds: rank ${rank} sent a ${kindName(h.roundKind)} frame into a ${kindName(this.roundKindValue)} round`,
            );
          } else if (h.numTensors !== this.tensorCount) {
            throw foldError(
              `desynced reduce rounds: rank ${rank} sent ${h.numTensors} tensors, the round has ${this.tensorCount}`,
            );
          }
        }),
      onTensor: (t) =>
        this.guard(() => {
          if (!live()) return;
          tensorsSeen++;
          tensorIndex = t.index;
          writer = null;
          if (t.index >= this.tensorCount) {
            throw foldError(`tensor ${t.index}: beyond the round's ${this.tensorCount} tensors`);
          }
          const size = elementSize(t.dtype);
          const n = numel(t.dims);
          if (t.nbytes !== 0 && t.nbytes !== n * size) {
            throw foldError(
              `tensor ${t.index}: payload of ${t.nbytes} bytes does not match numel ${n} x ${size} bytes`,
            );
          }
          const s = this.schema[t.index];
          if (s === undefined) {
            this.schema[t.index] = { dtype: t.dtype, dims: [...t.dims], numel: n };
            this.states[t.index] = { kind: 'elided' };
            this.seedWriters[t.index] = null;
          } else {
            if (t.dtype !== s.dtype) {
              throw foldError(
                `tensor ${t.index}: dtype ${dtypeName(t.dtype)} from rank ${rank} differs from the round's ${dtypeName(s.dtype)} (every rank must use the same bf16_wire setting)`,
              );
            }
            if (t.dims.length !== s.dims.length || t.dims.some((d, i) => d !== s.dims[i])) {
              throw foldError(
                `tensor ${t.index}: shape ${shape(t.dims)} from rank ${rank} differs from the round's ${shape(s.dims)}`,
              );
            }
          }
          if (t.nbytes === 0) return; // elided (or empty): merges nothing
          const w: Writer = {
            index: t.index,
            dtype: t.dtype,
            size,
            numel: n,
            mode: 'copy',
            next: 0,
            carry: new Uint8Array(size),
            carryLen: 0,
          };
          w.mode = this.join(w, t.nbytes);
          writer = w;
        }),
      onData: (index, offset, bytes) =>
        this.guard(() => {
          if (!live()) return;
          const w = writer;
          if (index !== tensorIndex || w === null)
            throw foldError(`tensor ${index}: data without its header`);
          if (offset !== w.next * w.size + w.carryLen) {
            throw foldError(`tensor ${index}: data at byte ${offset} out of order`);
          }
          if (w.next * w.size + w.carryLen + bytes.length > w.numel * w.size) {
            throw foldError(`tensor ${index}: more data than its payload length`);
          }
          let pos = 0;
          if (w.carryLen > 0) {
            const take = Math.min(w.size - w.carryLen, bytes.length);
            w.carry.set(bytes.subarray(0, take), w.carryLen);
            w.carryLen += take;
            pos = take;
            if (w.carryLen < w.size) return;
            w.carryLen = 0;
            this.merge(w, w.carry);
          }
          const whole = Math.floor((bytes.length - pos) / w.size) * w.size;
          if (whole > 0) this.merge(w, bytes.subarray(pos, pos + whole));
          pos += whole;
          if (pos < bytes.length) {
            w.carry.set(bytes.subarray(pos));
            w.carryLen = bytes.length - pos;
          }
        }),
      onComplete: () =>
        this.guard(() => {
          if (!live()) return;
          if (tensorsSeen !== numTensors) throw foldError('deposit ended before all its tensors');
          this.inFlight.delete(rank);
          this.deposited.add(rank);
          this.massValue += weight;
        }),
    };
  }

  /**
   * A full payload starts merging into tensor `w.index`: the first one becomes
   * the seed (copied verbatim); the second promotes the seed to f32 sums from
   * +0.0, using only the seed's elements merged so far, and turns the seed's
   * writer into an adder for the rest; later ones add.
   */
  private join(w: Writer, nbytes: number): MergeMode {
    const i = w.index;
    const st = this.states[i];
    if (st.kind === 'elided') {
      this.seedWriters[i] = w;
      // f32: the seed goes straight into the accumulator, bit for bit.
      this.states[i] =
        w.dtype === DTYPE_F32 && LITTLE_ENDIAN_HOST
          ? { kind: 'sum', acc: allocAccumulator(w.numel, true), deposits: 1 }
          : { kind: 'seed', bytes: this.lend(nbytes) };
      return 'copy';
    }
    const seedWriter = this.seedWriters[i];
    this.seedWriters[i] = null;
    if (st.kind === 'seed') {
      const done = seedWriter ? seedWriter.next : w.numel;
      const acc = allocAccumulator(w.numel);
      if (done > 0) addBytes(acc, st.bytes.subarray(0, done * w.size), 0, w.dtype, false);
      this.states[i] = { kind: 'sum', acc, deposits: 2 };
      if (seedWriter) seedWriter.mode = 'add';
      return 'add';
    }
    st.deposits++;
    if (st.deposits > 2) return 'add';
    // The f32 seed is in the accumulator up to its writer's progress; the
    // rest becomes +0.0, onto which both deposits now add.
    if (seedWriter) {
      if (seedWriter.next < w.numel) st.acc.fill(0, seedWriter.next, w.numel);
      seedWriter.mode = 'add';
    }
    return 'addFromZero';
  }

  /** Merges whole elements of `w`'s payload at its progress and advances it. */
  private merge(w: Writer, src: Uint8Array): void {
    const st = this.states[w.index];
    const at = w.next;
    if (st.kind === 'seed') st.bytes.set(src, at * w.size);
    else if (st.kind === 'sum') {
      if (w.mode === 'copy') new Uint8Array(st.acc.buffer, st.acc.byteOffset + at * 4, src.length).set(src);
      else addBytes(st.acc, src, at, w.dtype, w.mode === 'addFromZero');
    }
    w.next = at + src.length / w.size;
  }

  /** Seeds still streaming get zeros beyond their progress (recycled memory holds stale bytes there). */
  private settleStreamingSeeds(): void {
    this.seedWriters.forEach((w, i) => {
      const st = this.states[i];
      if (!w || w.next >= w.numel) return;
      if (st.kind === 'sum') st.acc.fill(0, w.next, w.numel);
      else if (st.kind === 'seed') st.bytes.fill(0, w.next * w.size);
    });
  }

  /** `nbytes` of recycled kernel memory (uninitialized) for this round, returned at reset(). */
  private lend(nbytes: number): Uint8Array {
    const m = allocAccumulator(Math.ceil(nbytes / 4), true);
    this.lent.push(m);
    return new Uint8Array(m.buffer, m.byteOffset, nbytes);
  }

  /**
   * The round's sum as a frame in the round's dtypes (the relay re-signs and
   * ships it as its HostFrame); null before any deposit. A single deposit comes
   * back bit for bit, sums are encoded in the dtype (bf16 via RNE), elided
   * stays elided. f32 data are views of the accumulator: valid until reset().
   * A deposit still streaming (a rank that died mid-frame) counts with the
   * bytes merged so far and merges nothing after this call (nor does any
   * other deposit until reset()).
   */
  result(): RoundFrame | null {
    return this.guard(() => {
      if (this.roundKindValue === null || this.deposited.size === 0) return null;
      this.sealed = true;
      this.settleStreamingSeeds();
      const tensors: TensorEntry[] = this.schemaList().map((s, i) => {
        const st = this.states[i];
        const dims = [...s.dims];
        if (st.kind === 'elided')
          return { dtype: s.dtype, dims, data: s.numel === 0 ? new Uint8Array(0) : null };
        if (st.kind === 'seed') return { dtype: s.dtype, dims, data: st.bytes };
        // f32: the accumulator's own bytes (no copy); bf16: re-encoded with RNE.
        if (s.dtype === DTYPE_F32 && LITTLE_ENDIAN_HOST) {
          return {
            dtype: s.dtype,
            dims,
            data: new Uint8Array(st.acc.buffer, st.acc.byteOffset, st.acc.length * 4),
          };
        }
        return { dtype: s.dtype, dims, data: this.encodeSums(s.dtype, st.acc) };
      });
      return { roundKind: this.roundKindValue!, weight: this.massValue, tensors };
    });
  }

  /**
   * result() for a caller that must not block its event loop: bf16 sums are
   * re-encoded (RNE) in slices of `sliceElems` elements with `pause()` awaited
   * between slices (a 16 MiB model takes tens of milliseconds in one go).
   * The round is taken and sealed at the call, as with result(); errors are
   * thrown at the call too. Everything else is result()'s.
   */
  resultSliced(pause: () => Promise<void>, sliceElems = 1 << 18): Promise<RoundFrame | null> {
    const frame = this.guard(() => {
      if (this.roundKindValue === null || this.deposited.size === 0) return null;
      this.sealed = true;
      this.settleStreamingSeeds();
      const later: Array<{ index: number; acc: Float32Array }> = [];
      const tensors = this.schemaList().map((s, i): TensorEntry => {
        const st = this.states[i];
        const dims = [...s.dims];
        if (st.kind === 'sum' && !(s.dtype === DTYPE_F32 && LITTLE_ENDIAN_HOST)) {
          later.push({ index: i, acc: st.acc });
          return { dtype: s.dtype, dims, data: null };
        }
        if (st.kind === 'elided')
          return { dtype: s.dtype, dims, data: s.numel === 0 ? new Uint8Array(0) : null };
        if (st.kind === 'seed') return { dtype: s.dtype, dims, data: st.bytes };
        return {
          dtype: s.dtype,
          dims,
          data: new Uint8Array(st.acc.buffer, st.acc.byteOffset, st.acc.length * 4),
        };
      });
      return { frame: { roundKind: this.roundKindValue!, weight: this.massValue, tensors }, later };
    });
    if (frame === null) return Promise.resolve(null);
    return (async () => {
      for (const { index, acc } of frame.later) {
        const t = frame.frame.tensors[index];
        const size = elementSize(t.dtype);
        const out = this.lend(acc.length * size);
        for (let o = 0; o < acc.length; o += sliceElems) {
          const end = Math.min(acc.length, o + sliceElems);
          if (t.dtype === DTYPE_BF16) encodeBf16Sums(acc, o, end, out, o);
          else out.set(encodeValues(t.dtype, acc.subarray(o, end)), o * size);
          if (end < acc.length) await pause();
        }
        t.data = out;
      }
      return frame.frame;
    })();
  }

  /**
   * The round's sums as f32 values (the controller's reduce scales them in
   * place before encoding); null before any deposit. f32 sums are views of
   * the accumulator (valid until reset()); a bf16 seed is widened exactly.
   */
  sums(): { roundKind: number; weight: number; tensors: FoldedTensor[] } | null {
    return this.guard(() => {
      if (this.roundKindValue === null || this.deposited.size === 0) return null;
      this.sealed = true;
      this.settleStreamingSeeds();
      const tensors = this.schemaList().map((s, i): FoldedTensor => {
        const st = this.states[i];
        const dims = [...s.dims];
        if (st.kind === 'elided') return { dtype: s.dtype, dims, values: null };
        if (st.kind === 'seed')
          return { dtype: s.dtype, dims, values: tensorValues({ dtype: s.dtype, dims, data: st.bytes }) };
        return { dtype: s.dtype, dims, values: st.acc };
      });
      return { roundKind: this.roundKindValue!, weight: this.massValue, tensors };
    });
  }

  /** f32 sums in the wire dtype, into recycled memory (valid until reset(), like the sums). */
  private encodeSums(dtype: number, sums: Float32Array): Uint8Array {
    return dtype === DTYPE_BF16
      ? encodeBf16Sums(sums, 0, sums.length, this.lend(sums.length * 2))
      : encodeValues(dtype, sums);
  }

  /** The round's tensor schema (complete once a deposit completed). */
  private schemaList(): Schema[] {
    return Array.from({ length: this.tensorCount }, (_, i) => {
      const s = this.schema[i];
      if (!s) throw foldError(`tensor ${i}: no deposit reached it`);
      return s;
    });
  }
}

/** A folded tensor in its wire dtype: f32 sums as they are (a view), bf16 re-encoded with RNE; elided stays elided. */
export function encodeFoldedTensor(t: FoldedTensor): TensorEntry {
  if (!t.values) return { dtype: t.dtype, dims: t.dims, data: null };
  const data =
    t.dtype === DTYPE_F32 && LITTLE_ENDIAN_HOST
      ? new Uint8Array(t.values.buffer, t.values.byteOffset, t.values.byteLength)
      : encodeSums(t.dtype, t.values);
  return { dtype: t.dtype, dims: t.dims, data };
}

/** f32 sums in the wire dtype: bf16 through the fast re-encoder, f32 copied. */
function encodeSums(dtype: number, sums: Float32Array): Uint8Array {
  return dtype === DTYPE_BF16 ? encodeBf16Sums(sums) : encodeValues(dtype, sums);
}

function addBytes(
  acc: Float32Array,
  src: Uint8Array,
  accOffset: number,
  dtype: number,
  fromZero: boolean,
): void {
  const k = getFoldKernel();
  if (dtype === DTYPE_BF16) k.addBf16Into(acc, src, accOffset);
  else k.addF32Into(acc, src, accOffset, fromZero);
}

/** sum_frames: pure sum of every frame, masses summed, kind preserved (all validations of the fold). */
export function sumFrames(frames: readonly RoundFrame[]): RoundFrame {
  if (frames.length === 0) throw foldError('no frames to sum');
  const acc = new FoldAccumulator();
  frames.forEach((f, i) => acc.deposit(i, f));
  return acc.result()!;
}

/**
 * reduce_realized_work (WIRE.md 4.5): sum the accepted frames (null = not
 * accepted, e.g. dead), then for Model frames with total mass > 0 multiply
 * every element by fround(1 / mass) (bf16: decode, multiply in f32, RNE).
 * Control frames are a pure sum; zero mass leaves the sum untouched.
 */
export function reduceRealizedWork(frames: ReadonlyArray<RoundFrame | null | undefined>): RoundFrame {
  const accepted = frames.filter((f): f is RoundFrame => !!f);
  if (accepted.length === 0) throw foldError('reduce_realized_work: no accepted frames');
  const sum = sumFrames(accepted);
  if (sum.roundKind !== ROUND_KIND_MODEL || !(sum.weight > 0)) return sum;
  const inv = Math.fround(1 / sum.weight);
  const tensors = sum.tensors.map((t) => {
    if (t.data === null) return t;
    const v = tensorValues(t);
    for (let i = 0; i < v.length; i++) v[i] *= inv;
    return { dtype: t.dtype, dims: t.dims, data: encodeValues(t.dtype, v) };
  });
  return { roundKind: sum.roundKind, weight: sum.weight, tensors };
}

/** Tolerances of WIRE.md 7.3: relative 1e-6 for f32, 2/256 for bf16. */
export function foldTolerance(dtype: number): number {
  return dtype === DTYPE_BF16 ? 2 / 256 : 1e-6;
}

/**
 * Element-wise comparison within the dtype's relative tolerance:
 * |a - b| <= tol * max(|a|, |b|) + absTol. NaN matches NaN; infinities must
 * be identical. Never byte-for-byte: summation order differs across fold
 * topologies.
 */
export function roundsAlmostEqual(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  dtype: number,
  absTol = 0,
): boolean {
  return firstMismatch(a, b, dtype, absTol) === -1;
}

/** Index of the first element outside tolerance (-1: none; a length mismatch is index 0). */
export function firstMismatch(a: ArrayLike<number>, b: ArrayLike<number>, dtype: number, absTol = 0): number {
  if (a.length !== b.length) return 0;
  const tol = foldTolerance(dtype);
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (Number.isNaN(x) || Number.isNaN(y)) {
      if (Number.isNaN(x) && Number.isNaN(y)) continue;
      return i;
    }
    if (!Number.isFinite(x) || !Number.isFinite(y)) {
      if (x === y) continue;
      return i;
    }
    if (Math.abs(x - y) > tol * Math.max(Math.abs(x), Math.abs(y)) + absTol) return i;
  }
  return -1;
}
