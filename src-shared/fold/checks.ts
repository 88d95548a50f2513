// The fold's checks, in flodl's order (WIRE.md 4.4): a later deposit against
// the round's first one (kind, tensor count, dtype, shape), and a payload's
// dtype and byte count only when it is about to be summed.
import { ROUND_KIND_CONTROL, ROUND_KIND_MODEL } from '../wire/constants';
import { WireError } from '../wire/errors';
import { dtypeName, elementSize } from '../wire/tensor';

export interface StagedTensor {
  dtype: number;
  dims: number[];
  nbytes: number;
  /** Where its bytes start in the deposit's staging. */
  start: number;
}

/** What a deposit declared (unverified until its MAC is). */
export interface DepositSchema {
  rank: number;
  roundKind: number;
  weight: number;
  numTensors: number;
  tensors: StagedTensor[];
}

/** The round's tensors, from its first merged deposit. */
export interface Schema {
  dtype: number;
  dims: number[];
  numel: number;
}

const kindName = (k: number) =>
  k === ROUND_KIND_MODEL ? 'Model' : k === ROUND_KIND_CONTROL ? 'Control' : `kind ${k}`;
const shape = (d: number[]) => `[${d.join(', ')}]`;

export function foldError(message: string): WireError {
  return new WireError('BAD_PAYLOAD', message);
}

export function checkAgainstRound(d: DepositSchema, roundKind: number | null, schema: Schema[]): void {
  const rank = d.rank;
  if (d.roundKind !== roundKind) {
    throw foldError(
      `desynced reduce rounds: rank ${rank} sent a ${kindName(d.roundKind)} frame into a ${kindName(roundKind!)} round`,
    );
  }
  if (d.numTensors !== schema.length) {
    throw foldError(
      `desynced reduce rounds: rank ${rank} sent ${d.numTensors} tensors, the round has ${schema.length}`,
    );
  }
  d.tensors.forEach((t, i) => {
    const s = schema[i];
    if (t.dtype !== s.dtype) {
      throw foldError(
        `tensor ${i}: dtype ${dtypeName(t.dtype)} from rank ${rank} differs from the round's ${dtypeName(s.dtype)} (every rank must use the same bf16_wire setting)`,
      );
    }
    if (t.dims.length !== s.dims.length || t.dims.some((x, k) => x !== s.dims[k])) {
      throw foldError(
        `tensor ${i}: shape ${shape(t.dims)} from rank ${rank} differs from the round's ${shape(s.dims)}`,
      );
    }
  });
}

/** A payload about to be summed: a known dtype and exactly numel x element size bytes. */
export function checkPayload(i: number, t: StagedTensor, s: Schema, rank: number): number {
  const size = elementSize(t.dtype);
  const n = s.numel;
  if (t.nbytes !== n * size) {
    throw foldError(
      `tensor ${i} from rank ${rank}: payload of ${t.nbytes} bytes does not match numel ${n} x ${size} bytes`,
    );
  }
  return size;
}
