// Collects one streamed RoundFrame for a holder that needs it whole later
// (the controller keeps each contribution until its round completes; a
// forwarding relay sends it on verbatim). The parser validates and MACs chunk
// by chunk; tensor bytes are copied once into per-tensor buffers that grow
// as bytes arrive.
import { RoundFrameStreamParser, type RoundFrameSink } from '@shared/wire/round-frame-stream';
import type { Mac } from '@shared/wire/mac';
import { BodyBuffer } from './framing';

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
  private readonly tensors: { dtype: number; dims: number[]; buf: BodyBuffer | null }[] = [];
  private result: CollectedFrame | null = null;

  constructor(mac: Mac, ceiling: number, totalLen: number | undefined, extraSink?: RoundFrameSink) {
    this.parser = new RoundFrameStreamParser(mac, {
      ceiling,
      totalLen,
      sink: {
        onHeader: (h) => {
          this.roundKind = h.roundKind;
          this.weight = h.weight;
          extraSink?.onHeader?.(h);
        },
        onTensor: (t) => {
          this.tensors.push({
            dtype: t.dtype,
            dims: t.dims,
            buf: t.nbytes > 0 ? new BodyBuffer(t.nbytes) : null,
          });
          extraSink?.onTensor?.(t);
        },
        onData: (i, off, bytes) => {
          this.tensors[i].buf?.push(bytes);
          extraSink?.onData?.(i, off, bytes);
        },
        onComplete: (c) => {
          this.result = {
            roundKind: this.roundKind,
            weight: this.weight,
            tensors: this.tensors.map((t) => ({
              dtype: t.dtype,
              dims: t.dims,
              data: t.buf ? t.buf.bytes() : null,
            })),
            wireLen: c.wireLen,
          };
          extraSink?.onComplete?.(c);
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

  get frame(): CollectedFrame | null {
    return this.result;
  }
}
