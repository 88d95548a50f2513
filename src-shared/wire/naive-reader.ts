// HISTORICAL BUG, reproduced on purpose (WIRE.md 6.1, "the single hardest bug
// in this transport"): early readers polled a shutdown flag with a socket read
// timeout and, when the timeout fired after part of a frame had been read,
// dropped those bytes. The next read then started mid-frame: a magic/HMAC
// garbage error, or a wedge on a garbage length. This reader does exactly that
// so the lab can show it; nothing in the engine's normal path may use it.
import { LenFrameReader } from './len-frame-reader';
import { MuxReader } from './mux-reader';
import type { ReaderClock, ReaderStatus } from './reader-core';

export const NAIVE_READER_LABEL =
  'historical bug (flodl pre-fix, WIRE.md 6.1): drops a partial frame on a read timeout';

export interface NaiveReaderOptions extends ReaderClock {
  framing: 'mux' | 'len';
  ceiling?: number;
}

export class NaiveReader {
  /** Always true: this reader is a reproduction of a bug, labelled wherever it appears. */
  readonly historical = true;
  readonly label = NAIVE_READER_LABEL;
  private readonly inner: MuxReader | LenFrameReader;
  /** Bytes thrown away by timeouts so far. */
  droppedBytes = 0;

  constructor(opts: NaiveReaderOptions) {
    this.inner =
      opts.framing === 'mux'
        ? new MuxReader({ ceiling: opts.ceiling, now: opts.now })
        : new LenFrameReader({ ceiling: opts.ceiling, now: opts.now });
  }

  push(chunk: Uint8Array): Uint8Array[] {
    return this.inner.push(chunk);
  }

  /** The socket read timeout fired: the bug drops whatever partial frame was held. Returns the bytes dropped. */
  timeout(): number {
    const n = this.inner.resetPartial();
    this.droppedBytes += n;
    return n;
  }

  status(): ReaderStatus {
    return this.inner.status();
  }

  end(): void {
    this.inner.end();
  }
}
