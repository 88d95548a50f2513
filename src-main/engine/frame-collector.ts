// Collects one streamed RoundFrame for a holder that needs it whole later
// (the controller keeps each contribution until its round completes). The
// codec's parser validates and MACs chunk by chunk; tensor bytes are joined
// as the chunks arrive, into one buffer of the tensor's length, so a lying length
// holds at most one declared length (bounded by the frame ceiling). Tensor
// buffers come from a pool of recycled buffers (buffer-pool.ts says why) and
// go back with releaseFrame once the frame is reduced. The frame is handed
// out only once its footer MAC verified.
import type { Mac } from '@shared/wire/mac';
import { ChunkAccumulator } from '@shared/wire/reader-core';
import { RoundFrameStreamParser } from '@shared/wire/round-frame-stream';
import { unitBuffers, type BufferPool } from './buffer-pool';

export interface CollectedTensor {
  dtype: number;
  dims: number[];
  /** null = elided. */
  data: Uint8Array | null;
}

export interface CollectedFrame {
  roundKind: number;
  weight: number;
  tensors: CollectedTensor[];
  wireLen: number;
}

export class FrameCollector {
  private readonly parser: RoundFrameStreamParser;
  private roundKind = 0;
  private weight = 0;
  private readonly tensors: { dtype: number; dims: number[]; data: ChunkAccumulator | null }[] = [];
  private result: CollectedFrame | null = null;

  /** `pool`: where tensor buffers come from; the holder gives them back (releaseFrame) once it is done with them. */
  constructor(mac: Mac, ceiling: number, totalLen: number | undefined, pool: BufferPool = unitBuffers) {
    this.parser = new RoundFrameStreamParser(mac, {
      ceiling,
      totalLen,
      // flodl ignores bytes after a RoundFrame's footer inside a HostFrame payload or blob (issue 16 item 6).
      trailing: 'ignore',
      sink: {
        onHeader: (h) => {
          this.roundKind = h.roundKind;
          this.weight = h.weight;
        },
        onTensor: (t) => {
          // Joined as its bytes arrive (the last chunk leaves nothing to copy), never past twice what came.
          const data = t.nbytes > 0 ? new ChunkAccumulator() : null;
          data?.expect(t.nbytes, (n) => pool.take(n));
          this.tensors.push({ dtype: t.dtype, dims: t.dims, data });
        },
        // Views into the pushed chunks, which are never reused (socket chunks).
        onData: (i, _off, bytes) => this.tensors[i].data?.append(bytes),
        onComplete: (c) => {
          this.result = {
            roundKind: this.roundKind,
            weight: this.weight,
            tensors: this.tensors.map((t) => ({
              dtype: t.dtype,
              dims: t.dims,
              data: t.data ? t.data.take() : null,
            })),
            wireLen: c.wireLen,
          };
        },
      },
    });
  }

  push(chunk: Uint8Array): void {
    this.parser.push(chunk);
  }

  /** Ends the frame; throws a WireError when it is incomplete. Returns the verified frame. */
  end(): CollectedFrame {
    this.parser.end();
    if (!this.result) throw new Error('RoundFrame ended without its footer');
    return this.result;
  }
}

/** Gives a reduced frame's tensor buffers back to the pool they came from (nothing reads them after). */
export function releaseFrame(frame: CollectedFrame, pool: BufferPool = unitBuffers): void {
  for (const t of frame.tensors) if (t.data) pool.give(t.data);
}
