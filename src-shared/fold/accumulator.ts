// (Over 400 lines: one state machine, a deposit's stage/commit/drop, the round's promotion, its
// take and a replay's enforced merge order, kept in one reading order on purpose; staging, checks
// and the merge are already apart.)
// The relay's fold, flodl's HostFold (WIRE.md 4.4): element-wise sums
// accumulated in f32 whatever the wire dtype, masses summed in f64, never a
// divide, zero-elision aware.
//
// Atomic deposits: a deposit streams into its own staging (staging.ts) and
// is committed only when its footer MAC verified (onComplete); the committed
// payloads are summed in commit order when the round is taken (merge.ts), so
// no byte of an unverified frame ever reaches a sum and a half-arrived frame
// can never be shipped. dropPending(rank) discards a rank's deposit
// that has not committed yet (the rank died: its death decides its
// contribution at merge time, as in flodl).
//
// Merging, as flodl: the first full payload of a tensor is held verbatim as
// its seed (a single-deposit round ships the rank's bytes unchanged). A
// second full payload of any tensor promotes the whole frame to f32 sums
// from +0.0: every seed becomes 0 + seed, every tensor elided so far becomes
// zeros (it ships as zeros, no longer elided), then deposits add in commit
// order. The adds themselves are deferred to take(): commit records which
// staged payloads a tensor sums, and take() sums them in that order in one
// pass (the same bits as adding deposit by deposit, one f32 rounding per
// add), with no staging copy when the deposit was staged by reference.
// Elided payloads merge nothing. Checks follow flodl's order too: round
// kind, tensor count, dtype and shape against the first deposit for every
// later deposit; a payload's dtype and byte count when it becomes a summand
// (a later deposit's at its commit, a seed's at promotion), never on the
// first deposit.
// After an error the accumulator is poisoned and every call rethrows it.
//
// Memory: a streaming deposit costs the bytes it received plus one staging
// block; a committed deposit keeps its staged bytes until its payloads are
// summed (a promoted round's take) or until reset() (seeds); sums are
// allocated only when the round is taken, from verified frames, in the fold
// kernel's recycled memories. result() returns views of them and of the
// seeds' staging, valid until reset(); FoldRounds (rounds.ts) delays that
// reset by a round for the relay, whose HostFrame is still being sent.
import {
  DEFAULT_FRAME_CEILING,
  DTYPE_BF16,
  DTYPE_F32,
  ROUND_FRAME_FOOTER_LEN,
  ROUND_FRAME_HEADER_LEN,
} from '../wire/constants';
import { WireError } from '../wire/errors';
import type { RoundFrame } from '../wire/round-frame';
import type { RoundFrameSink } from '../wire/round-frame-stream';
import { LITTLE_ENDIAN_HOST, elementSize, encodeValues, numel, type TensorEntry } from '../wire/tensor';
import {
  checkAgainstRound,
  checkPayload,
  foldError,
  type DepositSchema,
  type Schema,
  type StagedTensor,
} from './checks';
import { allocAccumulator, releaseAccumulator } from './kernel';
import { mergeSources, type MergeSource } from './merge';
import { DepositStaging } from './staging';

/** Largest tensor the fold sums (elements): a verified frame still gets a named error, not a RangeError. */
const MAX_SUM_ELEMENTS = 2 ** 28;

interface Deposit extends DepositSchema {
  tensors: StagedTensor[];
  staging: DepositStaging;
  /** Tensors whose seed or summand is in this deposit's staging (kept while any). */
  refs: number;
  state: 'streaming' | 'committed' | 'discarded';
}

type TensorState =
  | { kind: 'elided' }
  /** The tensor's only full payload so far, verbatim in its deposit's staging. */
  | { kind: 'seed'; deposit: Deposit; tensor: StagedTensor }
  /** Promoted: the payloads to sum from +0.0, in commit order (none: zeros). */
  | { kind: 'sum'; sources: MergeSource[] };

/** Default elements per slice of resultSliced's work (element-adds of the merge, elements of an encode). */
const SLICE_ELEMS = 1 << 18;

/** How a deposit's bytes are staged. */
export interface DepositOptions {
  /**
   * The producer never writes a chunk again once handed over (a socket's
   * 'data' buffers, a decoded frame nobody mutates): large pieces are kept as
   * views, with no copy (staging.ts). Default: copied.
   */
  byReference?: boolean;
}

/** A sink that consumes a frame and keeps nothing (a dropped rank's frame). */
const INERT_SINK: RoundFrameSink = {};

/** What the fold needs to know of its session. */
export interface FoldOptions {
  /**
   * The session's frame ceiling (default DEFAULT_FRAME_CEILING). A promoted
   * round ships every tensor in full, elided ones as zeros (WIRE.md 4.4), so
   * two frames of a few dozen bytes can declare gigabytes of zeros to
   * materialize, sum and encode; the fold refuses (OVER_CEILING) a promotion
   * whose HostFrame would exceed the ceiling, as every receiver would.
   */
  ceiling?: number;
}

export class FoldAccumulator {
  private readonly ceiling: number;

  constructor(opts: FoldOptions = {}) {
    this.ceiling = opts.ceiling ?? DEFAULT_FRAME_CEILING;
  }

  private roundKindValue: number | null = null;
  private schema: Schema[] = [];
  private states: TensorState[] = [];
  private promoted = false;
  private massValue = 0;
  private order: number[] = [];
  private readonly deposited = new Set<number>();
  private readonly pending = new Map<number, Deposit>();
  private readonly dropped = new Set<number>();
  /** Committed deposits whose staging holds seeds or summands. */
  private held: Deposit[] = [];
  private failure: WireError | null = null;
  /** Bumped by reset(): sinks of an earlier round are ignored from then on. */
  private generation = 0;
  /** Kernel memory lent to this round (sums, copied seeds, bf16 outputs), returned at reset(). */
  private lent: Float32Array[] = [];
  /** Set by result(): what it returned may be in use, so nothing merges any more until reset(). */
  private sealed = false;
  /** The taken round: its frame once summed (a later result() returns it again), or the sliced take in progress. */
  private taken: { frame: RoundFrame | null } | Promise<RoundFrame | null> | null = null;
  /** Lab replays only: the merge order to enforce this round (setMergeOrder), and verified deposits waiting for their turn. */
  private enforced: number[] | null = null;
  private readonly waiting = new Map<number, Deposit>();

  /** Ranks whose deposit was merged this round, ascending. */
  get ranks(): number[] {
    return [...this.deposited].sort((a, b) => a - b);
  }

  /** Ranks whose deposit was merged this round, in merge order (the order the sums were built in). */
  get mergeOrder(): number[] {
    return [...this.order];
  }

  get depositCount(): number {
    return this.deposited.size;
  }

  /** Sum of the merged masses (f64, merge order). */
  get mass(): number {
    return this.massValue;
  }

  get roundKind(): number | null {
    return this.roundKindValue;
  }

  hasDeposited(rank: number): boolean {
    return this.deposited.has(rank);
  }

  /** True while `rank` has a deposit streaming (begun, not yet merged nor dropped). */
  isPending(rank: number): boolean {
    return this.pending.has(rank) || this.waiting.has(rank);
  }

  /**
   * Starts the next round. The sums and seeds go back for reuse: the caller
   * must be done with what result() returned (FoldRounds keeps them for a
   * round or two). A deposit of the finished round still streaming merges
   * nothing from now on.
   */
  reset(): void {
    for (const m of this.lent) releaseAccumulator(m);
    for (const d of this.held) d.staging.release();
    for (const d of this.pending.values()) this.discard(d);
    this.lent = [];
    this.held = [];
    this.roundKindValue = null;
    this.schema = [];
    this.states = [];
    this.promoted = false;
    this.massValue = 0;
    this.order = [];
    this.deposited.clear();
    this.pending.clear();
    this.dropped.clear();
    for (const d of this.waiting.values()) this.discard(d);
    this.waiting.clear();
    this.enforced = null;
    this.failure = null;
    this.generation++;
    this.sealed = false;
    this.taken = null;
  }

  /**
   * A rank died: its deposit that has not merged yet is discarded (its
   * staging freed) and a later commit of it is ignored, as is any further
   * frame of it this round. A deposit already merged stays (WIRE.md 4.4).
   */
  dropPending(rank: number): void {
    this.dropped.add(rank);
    const w = this.waiting.get(rank);
    if (w) {
      this.waiting.delete(rank);
      this.discard(w);
    }
    const d = this.pending.get(rank);
    if (d) {
      this.pending.delete(rank);
      this.discard(d);
    }
    if (this.enforced) this.guard(() => this.drainEnforced());
  }

  /**
   * Lab-only, for deterministic replays (docs/reproduction-format.md): merge
   * this round's verified deposits in `order` (a recorded run's merge order)
   * instead of commit order. A deposit that verifies before its turn waits;
   * a rank of the order that is dropped is skipped; ranks outside the order
   * merge after it, in commit order. flodl itself merges in commit order.
   */
  setMergeOrder(order: readonly number[] | null): void {
    if (this.deposited.size > 0 || this.pending.size > 0)
      throw new Error('fold: setMergeOrder must come before the first deposit of a round');
    this.enforced = order ? [...order] : null;
  }

  /** Commits the waiting deposits whose turn has come. */
  private drainEnforced(): void {
    const order = this.enforced!;
    for (;;) {
      const next = order.find((r) => !this.deposited.has(r) && !this.dropped.has(r));
      const d = next !== undefined ? this.waiting.get(next) : this.waiting.values().next().value;
      if (!d) return;
      this.waiting.delete(d.rank);
      this.commitOrHold(d);
    }
  }

  private commitOrHold(d: Deposit): void {
    try {
      this.commit(d);
    } catch (e) {
      // A rejected deposit keeps no memory beyond the next reset().
      if (d.refs > 0) this.held.push(d);
      else d.staging.release();
      throw e;
    }
  }

  private discard(d: Deposit): void {
    d.state = 'discarded';
    d.staging.release();
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

  /** A whole decoded (already verified) frame from `rank`, through the same path as a streamed deposit. */
  deposit(rank: number, frame: RoundFrame, opts?: DepositOptions): void {
    const sink = this.beginDeposit(rank, opts);
    sink.onHeader?.({ roundKind: frame.roundKind, weight: frame.weight, numTensors: frame.tensors.length });
    frame.tensors.forEach((t, index) => {
      const nbytes = t.data === null ? 0 : t.data.length;
      sink.onTensor?.({ index, dtype: t.dtype, dims: t.dims, nbytes });
      if (t.data && nbytes) sink.onData?.(index, 0, t.data);
    });
    sink.onComplete?.({ tag: new Uint8Array(8), wireLen: 0 });
  }

  /**
   * A sink for RoundFrameStreamParser: stages the deposit's bytes as they
   * arrive and merges the deposit when onComplete fires (the parser calls it
   * only after the footer MAC verified). Several sinks may be fed interleaved.
   * A rank dropped this round gets a sink that keeps nothing.
   */
  beginDeposit(rank: number, opts: DepositOptions = {}): RoundFrameSink {
    if (this.sealed) throw new Error('fold: the round was already taken; reset() before the next deposit');
    this.guard(() => {
      if (this.deposited.has(rank) || this.pending.has(rank)) {
        throw foldError(`rank ${rank} deposited twice in one round (ping-pong violated)`);
      }
    });
    if (this.dropped.has(rank)) return INERT_SINK;
    const d: Deposit = {
      rank,
      roundKind: 0,
      weight: 0,
      numTensors: 0,
      tensors: [],
      staging: new DepositStaging(opts.byReference === true),
      refs: 0,
      state: 'streaming',
    };
    this.pending.set(rank, d);
    const generation = this.generation;
    // A deposit still streaming when its rank is dropped or the round is
    // taken or reset keeps nothing more (and has already freed its staging).
    const live = () => {
      if (d.state !== 'streaming') return false;
      if (generation === this.generation && !this.sealed) return true;
      this.discard(d);
      return false;
    };
    let written = 0;
    return {
      onHeader: (h) => {
        if (!live()) return;
        d.roundKind = h.roundKind;
        d.weight = h.weight;
        d.numTensors = h.numTensors;
      },
      onTensor: (t) => {
        if (!live()) return;
        d.tensors.push({
          dtype: t.dtype,
          dims: [...t.dims],
          nbytes: t.nbytes,
          start: d.staging.alignTensor(),
        });
        written = 0;
      },
      onData: (index, offset, bytes) =>
        this.guard(() => {
          if (!live()) return;
          const t = d.tensors[index];
          if (index !== d.tensors.length - 1 || t === undefined)
            throw foldError(`tensor ${index}: data without its header`);
          if (offset !== written) throw foldError(`tensor ${index}: data at byte ${offset} out of order`);
          if (written + bytes.length > t.nbytes)
            throw foldError(`tensor ${index}: more data than its payload length`);
          d.staging.append(bytes);
          written += bytes.length;
        }),
      onComplete: () =>
        this.guard(() => {
          if (!live()) return;
          if (d.tensors.length !== d.numTensors) throw foldError('deposit ended before all its tensors');
          this.pending.delete(rank);
          if (!this.enforced) return this.commitOrHold(d);
          this.waiting.set(rank, d);
          this.drainEnforced();
        }),
    };
  }

  /** Merges a verified deposit (WIRE.md 4.4), after checking it against the round's first deposit. */
  private commit(d: Deposit): void {
    d.state = 'committed';
    if (this.roundKindValue === null) {
      this.roundKindValue = d.roundKind;
      this.schema = d.tensors.map((t) => ({ dtype: t.dtype, dims: t.dims, numel: numel(t.dims) }));
      this.states = d.tensors.map(() => ({ kind: 'elided' }));
    } else checkAgainstRound(d, this.roundKindValue, this.schema);
    d.tensors.forEach((t, i) => {
      if (t.nbytes === 0) return; // elided (or empty): merges nothing
      const st = this.states[i];
      if (!this.promoted && st.kind === 'elided') {
        this.states[i] = { kind: 'seed', deposit: d, tensor: t };
        d.refs++;
        return;
      }
      // A second full payload promotes the whole frame (once); then it adds.
      if (!this.promoted) this.promote();
      this.addPayload(i, d, t);
    });
    this.massValue += d.weight;
    this.order.push(d.rank);
    this.deposited.add(d.rank);
    if (d.refs > 0) this.held.push(d);
    else d.staging.release();
  }

  /** Whole-frame promotion to f32 sums from +0.0: seeds become the first summands, elided tensors zeros. */
  private promote(): void {
    this.checkPromotedSize();
    this.promoted = true;
    this.states = this.states.map((st, i) => {
      const s = this.schema[i];
      elementSize(s.dtype);
      if (s.numel > MAX_SUM_ELEMENTS)
        throw new WireError('OVER_CEILING', `tensor ${i}: ${s.numel} elements is more than the fold sums`);
      const sum: TensorState = { kind: 'sum', sources: [] };
      // The seed's deposit keeps its reference: it is now a summand.
      if (st.kind === 'seed') this.addPayload(i, st.deposit, st.tensor, sum, false);
      return sum;
    });
  }

  /**
   * The promoted frame's length (WIRE.md 3.4: 17 + Σ(2 + 4·ndim + 8 + numel × size) + 8)
   * against the ceiling, before any of it is materialized: the work a
   * promotion does is bounded by the ceiling, not by what the dims claim.
   */
  private checkPromotedSize(): void {
    let len = ROUND_FRAME_HEADER_LEN + ROUND_FRAME_FOOTER_LEN;
    let zeros = 0;
    this.schema.forEach((s, i) => {
      const payload = s.numel * elementSize(s.dtype);
      len += 2 + 4 * s.dims.length + 8 + payload;
      if (this.states[i].kind === 'elided') zeros += payload;
    });
    if (len > this.ceiling)
      throw new WireError(
        'OVER_CEILING',
        `promoted round: its HostFrame would be ${len} bytes (${zeros} of them zeros for tensors elided so far), more than the frame ceiling ${this.ceiling}`,
      );
  }

  /** Records a committed payload as tensor i's next summand (checked now, summed when the round is taken). */
  private addPayload(i: number, d: Deposit, t: StagedTensor, st = this.states[i], newRef = true): void {
    checkPayload(i, t, this.schema[i], d.rank);
    if (st.kind !== 'sum') throw new Error('fold: adding onto a tensor that is not summed');
    st.sources.push({ staging: d.staging, start: t.start });
    if (newRef) d.refs++;
  }

  /** `nbytes` of recycled kernel memory (uninitialized) for this round, returned at reset(). */
  private lend(nbytes: number): Uint8Array {
    const m = allocAccumulator(Math.ceil(nbytes / 4), true);
    this.lent.push(m);
    return new Uint8Array(m.buffer, m.byteOffset, nbytes);
  }

  /** Takes the round: null before any merged deposit, else the frame and the sums still to compute. */
  private take(): { frame: RoundFrame; later: Array<{ index: number; sources: MergeSource[] }> } | null {
    return this.guard(() => {
      if (this.roundKindValue === null || this.deposited.size === 0) return null;
      this.sealed = true;
      const later: Array<{ index: number; sources: MergeSource[] }> = [];
      const tensors = this.schema.map((s, i): TensorEntry => {
        const st = this.states[i];
        const dims = [...s.dims];
        if (st.kind === 'elided')
          return { dtype: s.dtype, dims, data: s.numel === 0 ? new Uint8Array(0) : null };
        if (st.kind === 'seed') {
          const t = st.tensor;
          return {
            dtype: s.dtype,
            dims,
            data: st.deposit.staging.contiguous(t.start, t.nbytes, (n) => this.lend(n)),
          };
        }
        // Promoted: summed below; with no payload at all, zeros.
        if (st.sources.length === 0 || s.numel === 0)
          return { dtype: s.dtype, dims, data: new Uint8Array(s.numel * elementSize(s.dtype)) };
        later.push({ index: i, sources: st.sources });
        return { dtype: s.dtype, dims, data: null };
      });
      return { frame: { roundKind: this.roundKindValue, weight: this.massValue, tensors }, later };
    });
  }

  /**
   * The promoted tensors' sums (merge.ts), yielding between slices of about
   * `sliceElems` element-adds; f32 sums are views of kernel memory (LE hosts),
   * bf16 sums their RNE bits. The summed deposits' staging goes afterwards.
   */
  private *sums(
    frame: RoundFrame,
    later: Array<{ index: number; sources: MergeSource[] }>,
    sliceElems: number,
  ): Generator<void, RoundFrame> {
    const slice = { elems: sliceElems, work: 0 };
    for (const { index, sources } of later) {
      const t = frame.tensors[index];
      const n = this.schema[index].numel;
      if (t.dtype === DTYPE_BF16) {
        const out = this.lend(n * 2);
        yield* mergeSources(sources, n, t.dtype, out, slice);
        t.data = out;
      } else {
        const acc = allocAccumulator(n, true);
        this.lent.push(acc);
        yield* mergeSources(sources, n, t.dtype, acc, slice);
        t.data =
          t.dtype === DTYPE_F32 && LITTLE_ENDIAN_HOST
            ? new Uint8Array(acc.buffer, acc.byteOffset, n * 4)
            : encodeValues(t.dtype, acc);
      }
    }
    // Every summand is now in the sums: a promoted round holds no seed, so its deposits' bytes can go.
    if (this.promoted) {
      for (const d of this.held) d.staging.release();
      this.held = [];
    }
    return frame;
  }

  /**
   * The round's HostFrame contents (the relay re-signs and ships it); null
   * before any merged deposit. Seeds come back verbatim, sums in the round's
   * dtype (bf16 via RNE), promoted elided tensors as zeros, elided stays
   * elided otherwise. Data are views valid until reset(). The round is taken:
   * nothing merges any more until reset() (a deposit still streaming is lost).
   */
  result(): RoundFrame | null {
    if (this.taken instanceof Promise)
      throw new Error('fold: the round is being taken in slices; await resultSliced() instead');
    if (this.taken) return this.taken.frame;
    const taken = this.take();
    if (!taken) return null;
    const steps = this.sums(taken.frame, taken.later, Infinity);
    for (;;) {
      const r = steps.next();
      if (r.done) {
        this.taken = { frame: r.value };
        return r.value;
      }
    }
  }

  /**
   * result() for a caller that must not block its event loop: the sums are
   * computed (and bf16 sums re-encoded, RNE) in slices of about `sliceElems`
   * element-adds with `pause()` awaited between slices. The round is taken at
   * the call, errors are thrown at the call too; everything else is result()'s.
   */
  resultSliced(pause: () => Promise<void>, sliceElems = SLICE_ELEMS): Promise<RoundFrame | null> {
    // Taken already (or being taken): the same frame, summed once (the summed deposits' bytes are gone).
    if (this.taken instanceof Promise) return this.taken;
    if (this.taken) return Promise.resolve(this.taken.frame);
    const taken = this.take();
    if (!taken) return Promise.resolve(null);
    const steps = this.sums(taken.frame, taken.later, sliceElems);
    const generation = this.generation;
    const done = (async () => {
      for (;;) {
        const r = steps.next();
        if (r.done) {
          if (this.generation === generation) this.taken = { frame: r.value };
          return r.value;
        }
        await pause();
      }
    })();
    this.taken = done;
    return done;
  }
}
