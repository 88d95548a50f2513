// The rank's streamed write (WIRE.md 3.7, 4.6): the exact length prefix goes
// out first, then the body in pieces. The writer counts what the emitter
// actually produced and refuses a mismatch with the declared length, so a
// prefix/body drift is caught at the sender (5.4 item 22) instead of
// desyncing the reader.
import { DEFAULT_FRAME_CEILING } from './constants';
import { WireError } from './errors';
import { encodeLenPrefix } from './len-frame';
import type { Mac } from './mac';
import { encodeRoundFrameChunks, roundFrameWireLen, type RoundFrame } from './round-frame';

export class StreamedLenFrameWriter {
  private written = 0;

  /** Writes the prefix at once (rejecting len > ceiling, as write_len_prefix does). */
  constructor(
    readonly declared: number,
    private readonly sink: (bytes: Uint8Array) => void,
    ceiling: number = DEFAULT_FRAME_CEILING,
  ) {
    sink(encodeLenPrefix(declared, ceiling));
  }

  write(chunk: Uint8Array): void {
    if (this.written + chunk.length > this.declared) {
      throw new WireError(
        'BAD_PAYLOAD',
        `streamed body overruns its length prefix: declared ${this.declared} bytes, the emitter wrote ${this.written + chunk.length}`,
      );
    }
    this.written += chunk.length;
    if (chunk.length) this.sink(chunk);
  }

  /** The emitter is done: it must have written exactly the declared byte count. */
  finish(): void {
    if (this.written !== this.declared) {
      throw new WireError(
        'BAD_PAYLOAD',
        `streamed body does not match its length prefix: declared ${this.declared} bytes, the emitter wrote ${this.written}`,
      );
    }
  }
}

/** Prefix (the exact round_frame_wire_len) then the frame in chunks, the tensors' bytes unchanged. */
export function writeRoundFrameStreamed(
  frame: RoundFrame,
  mac: Mac,
  sink: (bytes: Uint8Array) => void,
  ceiling?: number,
): void {
  const w = new StreamedLenFrameWriter(roundFrameWireLen(frame), sink, ceiling);
  for (const c of encodeRoundFrameChunks(frame, mac)) w.write(c);
  w.finish();
}
