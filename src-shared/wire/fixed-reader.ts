// Reader of one fixed-size unit (handshakes, acks, channel magics): collects
// exactly n bytes, then hands back whatever followed them for the next reader.
import { ReaderBase, type ReaderClock } from './reader-core';

export interface FixedReaderOptions extends ReaderClock {
  /** Called with the bytes so far on every progress: reject early (a bad magic after 4 bytes). */
  check?: (prefix: Uint8Array) => void;
}

export class FixedReader extends ReaderBase {
  private readonly buf: Uint8Array;
  private got = 0;
  private readonly check: ((prefix: Uint8Array) => void) | undefined;

  constructor(
    readonly size: number,
    opts: FixedReaderOptions = {},
  ) {
    super(opts);
    this.buf = new Uint8Array(size);
    this.check = opts.check;
  }

  get done(): boolean {
    return this.got === this.size;
  }

  protected heldBytes(): number {
    return this.done ? 0 : this.got;
  }

  /** Returns the unit once complete (once), and the bytes after it. */
  push(chunk: Uint8Array): { unit: Uint8Array | null; rest: Uint8Array } {
    return this.guarded(() => {
      if (this.done) return { unit: null, rest: chunk };
      const n = Math.min(this.size - this.got, chunk.length);
      this.buf.set(chunk.subarray(0, n), this.got);
      this.got += n;
      this.progressed(n);
      this.check?.(this.buf.subarray(0, this.got));
      return { unit: this.done ? this.buf.slice() : null, rest: chunk.subarray(n) };
    });
  }
}
