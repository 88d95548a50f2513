// The relay's fold (WIRE.md 4.4), fed incrementally: element-wise sums
// accumulated in f32 whatever the wire dtype, masses in f64, never a divide.
// Elided payloads merge nothing; a tensor stays elided until a full payload
// arrives. Payload bytes may arrive split anywhere, even inside an element,
// and deposits of several ranks may stream interleaved (their sockets deliver
// chunks in any order): every deposit adds straight into the shared f32 sums,
// so interleaving is safe. The adds use the shared fold kernel (WebAssembly
// SIMD when available).
//
// Why not @shared/fold's FoldAccumulator: it holds the first deposit as a
// verbatim seed and promotes it to sums when the second deposit's tensor
// header arrives; when the two deposits stream interleaved, the first one's
// remaining bytes land in the discarded seed (see the engine report).
import { DTYPE_BF16, DTYPE_F32 } from '@shared/wire/constants';
import { LITTLE_ENDIAN_HOST, encodeValues, type TensorEntry } from '@shared/wire/tensor';
import { addBf16Into, addF32Into, allocAccumulator } from '@shared/fold-kernel';
import '@shared/fold'; // installs the fastest fold kernel
import type { RoundFrameHeaderInfo, RoundFrameSink, RoundFrameTensorInfo } from '@shared/wire/round-frame-stream';

export class FoldError extends Error {
  override readonly name = 'FoldError';
}

interface Slot {
  dtype: number;
  dims: number[];
  numel: number;
  acc: Float32Array | null;
}


function elementSize(dtype: number): number {
  if (dtype === DTYPE_F32) return 4;
  if (dtype === DTYPE_BF16) return 2;
  throw new FoldError(`unsupported dtype tag ${dtype} in reduce`);
}

function numelOf(dims: readonly number[]): number {
  return dims.reduce((a, b) => a * b, 1);
}

export interface FoldedTensor {
  dtype: number;
  dims: number[];
  /** Sums in f32; null = still elided (all zeros). */
  values: Float32Array | null;
}

export class FoldAcc {
  roundKind: number | null = null;
  weight = 0;
  private slots: Slot[] | null = null;
  /** Ranks that started a deposit this round, and those whose deposit completed (footer MAC verified). */
  private readonly depositors = new Set<number>();
  private readonly completed = new Set<number>();

  get depositCount(): number {
    return this.completed.size;
  }
  hasDeposited(rank: number): boolean {
    return this.completed.has(rank);
  }
  get ranks(): number[] {
    return [...this.completed].sort((a, b) => a - b);
  }

  /** Starts one deposit; the returned sink takes a RoundFrameStreamParser's callbacks. */
  depositSink(source: number): RoundFrameSink {
    if (this.depositors.has(source)) throw new FoldError(`rank ${source} deposited twice in one round (ping-pong violated)`);
    this.depositors.add(source);
    let weight = 0;
    let count = 0;
    let carry = new Uint8Array(4);
    let carryLen = 0;
    let cur: Slot | null = null;
    let curElided = false;
    return {
      onHeader: (h: RoundFrameHeaderInfo) => {
        this.checkHeader(h.roundKind, h.numTensors);
        weight = h.weight;
        count = h.numTensors;
      },
      onTensor: (t: RoundFrameTensorInfo) => {
        cur = this.checkTensor(t.index, t.dtype, t.dims, t.nbytes, count);
        curElided = t.nbytes === 0 && cur.numel > 0;
        carryLen = 0;
      },
      onData: (_index: number, offset: number, bytes: Uint8Array) => {
        if (!cur || curElided || bytes.length === 0) return;
        const es = elementSize(cur.dtype);
        let off = 0;
        if (carryLen > 0) {
          // Finish the element split across the previous chunk and this one.
          const start = offset - carryLen;
          const take = Math.min(es - carryLen, bytes.length);
          carry.set(bytes.subarray(0, take), carryLen);
          carryLen += take;
          off = take;
          if (carryLen < es) return;
          this.addBytes(cur, start / es, carry.subarray(0, es));
          carryLen = 0;
        }
        const elem = (offset + off) / es;
        const whole = Math.floor((bytes.length - off) / es) * es;
        if (whole > 0) this.addBytes(cur, elem, bytes.subarray(off, off + whole));
        const rest = bytes.length - off - whole;
        if (rest > 0) {
          carry = carry.length >= es ? carry : new Uint8Array(es);
          carry.set(bytes.subarray(off + whole));
          carryLen = rest;
        }
      },
      onComplete: () => {
        this.weight += weight;
        this.completed.add(source);
      },
    };
  }

  result(): { roundKind: number; weight: number; tensors: FoldedTensor[] } {
    if (this.roundKind === null || !this.slots) throw new FoldError('no accepted frames in this round');
    return { roundKind: this.roundKind, weight: this.weight, tensors: this.slots.map((s) => ({ dtype: s.dtype, dims: s.dims, values: s.acc })) };
  }

  private checkHeader(roundKind: number, numTensors: number): void {
    if (this.roundKind === null) {
      this.roundKind = roundKind;
      this.slots = [];
    } else if (this.roundKind !== roundKind) {
      throw new FoldError(`desynced reduce rounds: round kind ${roundKind} after ${this.roundKind}`);
    } else if (this.slotCount !== null && this.slotCount !== numTensors) {
      throw new FoldError(`tensor count ${numTensors} differs from the round's ${this.slotCount}`);
    }
    if (this.slotCount === null) this.slotCount = numTensors;
  }
  private slotCount: number | null = null;

  private checkTensor(index: number, dtype: number, dims: number[], nbytes: number, count: number): Slot {
    const slots = this.slots!;
    if (index >= count) throw new FoldError(`tensor ${index} beyond the frame's count ${count}`);
    const n = numelOf(dims);
    const es = elementSize(dtype);
    if (nbytes !== 0 && nbytes !== n * es) {
      throw new FoldError(`tensor ${index}: ${nbytes} payload bytes, expected ${n * es} (numel ${n} x ${es})`);
    }
    let slot = slots[index];
    if (!slot) {
      slot = { dtype, dims: [...dims], numel: n, acc: null };
      slots[index] = slot;
      return slot;
    }
    if (slot.dtype !== dtype) {
      throw new FoldError(`tensor ${index}: dtype ${dtype} differs from ${slot.dtype} (every rank must use the same bf16_wire setting)`);
    }
    if (slot.dims.length !== dims.length || slot.dims.some((d, i) => d !== dims[i])) {
      throw new FoldError(`tensor ${index}: shape [${dims}] differs from [${slot.dims}]`);
    }
    return slot;
  }

  /** Adds whole elements from `bytes`, starting at element `elem`. */
  private addBytes(slot: Slot, elem: number, bytes: Uint8Array): void {
    // An accumulator the kernel adds into in place (WebAssembly memory for big tensors).
    if (!slot.acc) slot.acc = allocAccumulator(slot.numel);
    if (slot.dtype === DTYPE_F32) addF32Into(slot.acc, bytes, elem);
    else addBf16Into(slot.acc, bytes, elem);
  }
}

/** A folded tensor in its wire dtype: f32 sums are sent as they are, bf16 re-encoded with RNE; elided stays elided. */
export function encodeFoldedTensor(t: FoldedTensor): TensorEntry {
  if (!t.values) return { dtype: t.dtype, dims: t.dims, data: null };
  const data =
    t.dtype === DTYPE_F32 && LITTLE_ENDIAN_HOST ? new Uint8Array(t.values.buffer, t.values.byteOffset, t.values.byteLength) : encodeValues(t.dtype, t.values);
  return { dtype: t.dtype, dims: t.dims, data };
}
