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
   */
  | { kind: 'sum'; acc: Float32Array; deposits: number };

/** How the current deposit's bytes for one tensor are merged. */
type MergeMode = 'copy' | 'add' | 'addFromZero';

interface Schema {
  dtype: number;
  dims: number[];
  numel: number;
}

const kindName = (k: number) =>
  k === ROUND_KIND_MODEL ? 'Model' : k === ROUND_KIND_CONTROL ? 'Control' : `kind ${k}`;
const shape = (d: number[]) => `[${d.join(', ')}]`;

function foldError(message: string): WireError {
  return new WireError('BAD_PAYLOAD', message);
}

export class FoldAccumulator {
  private roundKindValue: number | null = null;
  private schema: Schema[] = [];
  private states: TensorState[] = [];
  private massValue = 0;
  private readonly deposited = new Set<number>();
  private readonly inFlight = new Set<number>();
  private failure: WireError | null = null;

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
   * Starts the next round (the relay calls this after shipping its HostFrame).
   * The sums go back to the kernel for reuse: result() copied what it returned.
   */
  reset(): void {
    for (const st of this.states) if (st.kind === 'sum') releaseAccumulator(st.acc);
    this.roundKindValue = null;
    this.schema = [];
    this.states = [];
    this.massValue = 0;
    this.deposited.clear();
    this.inFlight.clear();
    this.failure = null;
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
   */
  beginDeposit(rank: number): RoundFrameSink {
    this.guard(() => {
      if (this.deposited.has(rank) || this.inFlight.has(rank)) {
        throw foldError(`rank ${rank} deposited twice in one round (ping-pong violated)`);
      }
      this.inFlight.add(rank);
    });
    let weight = 0;
    let isFirst = false;
    let numTensors = 0;
    // Per tensor of this deposit: where its bytes go, and the partial element carried between chunks.
    let target: TensorState | null = null;
    let mode: MergeMode = 'add';
    let tensorIndex = -1;
    let size = 4;
    let dtype = 0;
    const carry = new Uint8Array(4);
    let carryLen = 0;

    return {
      onHeader: (h) =>
        this.guard(() => {
          weight = h.weight;
          numTensors = h.numTensors;
          if (this.roundKindValue === null) {
            isFirst = true;
            this.roundKindValue = h.roundKind;
          } else if (h.roundKind !== this.roundKindValue) {
            throw foldError(
              `desynced reduce rounds: rank ${rank} sent a ${kindName(h.roundKind)} frame into a ${kindName(this.roundKindValue)} round`,
            );
          } else if (h.numTensors !== this.schema.length) {
            throw foldError(
              `desynced reduce rounds: rank ${rank} sent ${h.numTensors} tensors, the round has ${this.schema.length}`,
            );
          }
        }),
      onTensor: (t) =>
        this.guard(() => {
          size = elementSize(t.dtype);
          dtype = t.dtype;
          tensorIndex = t.index;
          carryLen = 0;
          const n = numel(t.dims);
          if (t.nbytes !== 0 && t.nbytes !== n * size) {
            throw foldError(
              `tensor ${t.index}: payload of ${t.nbytes} bytes does not match numel ${n} x ${size} bytes`,
            );
          }
          if (isFirst) {
            this.schema.push({ dtype: t.dtype, dims: [...t.dims], numel: n });
            this.states.push({ kind: 'elided' });
          } else {
            const s = this.schema[t.index];
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
          target = null;
          if (t.nbytes === 0) return; // elided (or empty): merges nothing
          const st = this.states[t.index];
          if (st.kind === 'elided' && t.dtype === DTYPE_F32 && LITTLE_ENDIAN_HOST) {
            // The first full f32 payload goes straight into the accumulator, bit for bit.
            const sum: TensorState = { kind: 'sum', acc: allocAccumulator(n, true), deposits: 1 };
            this.states[t.index] = sum;
            target = sum;
            mode = 'copy';
          } else if (st.kind === 'elided') {
            // The first full bf16 payload becomes the seed, held verbatim.
            const seed: TensorState = { kind: 'seed', bytes: new Uint8Array(t.nbytes) };
            this.states[t.index] = seed;
            target = seed;
          } else if (st.kind === 'seed') {
            // A second full payload promotes to f32 sums from +0.0: seed first, then this deposit.
            const acc = allocAccumulator(n);
            addBytes(acc, st.bytes, 0, t.dtype, false);
            const sum: TensorState = { kind: 'sum', acc, deposits: 2 };
            this.states[t.index] = sum;
            target = sum;
            mode = 'add';
          } else {
            mode = st.deposits === 1 ? 'addFromZero' : 'add';
            st.deposits++;
            target = st;
          }
        }),
      onData: (index, offset, bytes) =>
        this.guard(() => {
          if (index !== tensorIndex || target === null)
            throw foldError(`tensor ${index}: data without its header`);
          if (target.kind === 'seed') {
            target.bytes.set(bytes, offset);
            return;
          }
          if (target.kind !== 'sum') return;
          const acc = target.acc;
          if (mode === 'copy') {
            new Uint8Array(acc.buffer, acc.byteOffset, acc.length * 4).set(bytes, offset);
            return;
          }
          const fromZero = mode === 'addFromZero';
          let pos = 0;
          let elem = Math.floor((offset - carryLen) / size);
          if (carryLen > 0) {
            const take = Math.min(size - carryLen, bytes.length);
            carry.set(bytes.subarray(0, take), carryLen);
            carryLen += take;
            pos = take;
            if (carryLen < size) return;
            addBytes(acc, carry.subarray(0, size), elem, dtype, fromZero);
            elem++;
            carryLen = 0;
          }
          const whole = Math.floor((bytes.length - pos) / size) * size;
          if (whole > 0) addBytes(acc, bytes.subarray(pos, pos + whole), elem, dtype, fromZero);
          pos += whole;
          if (pos < bytes.length) {
            carry.set(bytes.subarray(pos));
            carryLen = bytes.length - pos;
          }
        }),
      onComplete: () =>
        this.guard(() => {
          if (isFirst && numTensors !== this.schema.length)
            throw foldError('deposit ended before all its tensors');
          this.inFlight.delete(rank);
          this.deposited.add(rank);
          this.massValue += weight;
        }),
    };
  }

  /**
   * The round's sum as a frame in the round's dtypes (the relay re-signs and
   * ships it as its HostFrame); null before any deposit. A single deposit comes
   * back bit for bit, sums are encoded in the dtype (bf16 via RNE), elided
   * stays elided. f32 data are views of the accumulator: valid until reset().
   */
  result(): RoundFrame | null {
    return this.guard(() => {
      if (this.roundKindValue === null || this.deposited.size === 0) return null;
      const tensors: TensorEntry[] = this.schema.map((s, i) => {
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
        return { dtype: s.dtype, dims, data: encodeValues(s.dtype, st.acc) };
      });
      return { roundKind: this.roundKindValue, weight: this.massValue, tensors };
    });
  }
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
