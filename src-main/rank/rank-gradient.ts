// A rank's synthetic gradient for a round: deterministic tensors pre-scaled
// by its mass (elided when the mass is 0), in value buffers reused from round
// to round (a fresh model-sized array a round was most of a rank's GC time).
import type { modelLayout } from '@shared/synthetic';
import { rankMass, fillValues } from '@shared/synthetic';
import { DTYPE_F32 } from '@shared/wire/constants';
import { LITTLE_ENDIAN_HOST, elidedTensor, tensorFromValues, type TensorEntry } from '@shared/wire/tensor';
import type { RankSpec } from './spec';

export interface Gradient {
  round: number;
  mass: number;
  tensors: TensorEntry[];
}

export class RankGradient {
  private readonly valueBuffers: Float32Array[] = [];

  constructor(
    private readonly spec: RankSpec,
    private readonly layout: ReturnType<typeof modelLayout>,
    private readonly dtype: number,
  ) {}

  /** The buffers of the last gradient may still be read by a write: the next one gets new ones. */
  forgetBuffers(): void {
    this.valueBuffers.length = 0;
  }

  make(round: number): Gradient {
    const spec = this.spec;
    const mass = rankMass(spec.seed, spec.rank, round, spec.idle);
    const tensors: TensorEntry[] = [];
    let start = 0;
    this.layout.shapes.forEach((dims, ti) => {
      const n = dims.reduce((a, b) => a * b, 1);
      if (mass === 0 && !spec.noElision) tensors.push(elidedTensor(this.dtype, dims));
      else {
        // The previous round's buffer is free again: its frame was read by the peer before the
        // consensus came back.
        const v = (this.valueBuffers[ti] ??= new Float32Array(n));
        // Historical reproduction: an idle rank whose local state holds NaN (0 x NaN = NaN without elision).
        if (spec.idleNaN && mass === 0) v.fill(NaN);
        else fillValues(spec.seed, spec.rank, round, start, v);
        scaleInPlace(v, mass);
        // f32 on a little-endian host: the values' own bytes are the wire bytes (no copy).
        tensors.push(
          this.dtype === DTYPE_F32 && LITTLE_ENDIAN_HOST
            ? { dtype: this.dtype, dims, data: new Uint8Array(v.buffer) }
            : tensorFromValues(this.dtype, dims, v),
        );
      }
      start += n;
    });
    return { round, mass, tensors };
  }
}

/** v[i] *= mass, in a function of its own: V8 optimizes a small loop at once, not inside a closure's. */
function scaleInPlace(v: Float32Array, mass: number): void {
  for (let i = 0; i < v.length; i++) v[i] *= mass;
}
