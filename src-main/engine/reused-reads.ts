// Reads of a socket this process connects into one reused buffer, through
// net.connect's documented `onread` option: a read takes as much as the
// kernel holds (up to the buffer), not Node's default 64 KiB into a freshly
// allocated buffer each time. A rank's 256 KiB consensus took five reads and
// 0.40-0.44 ms of CPU that way on this 2-core machine, and 0.12-0.15 ms in
// one read here (a loopback ping-pong of such frames). Every read is a view of the one
// buffer, valid only during the call: the Conn copies what it holds back
// (Conn.keepable), and the consumer copies what it keeps.
import type net from 'node:net';

/** The reused buffer's size: a model-sized frame arrives in reads of at most this. */
export const REUSED_READ_BYTES = 1 << 20;

export class ReusedReads {
  readonly buffer: Buffer;
  private sink: ((chunk: Uint8Array) => void) | null = null;
  /** Copies of reads that came before a sink was attached (none in practice: reads start after connect). */
  private early: Uint8Array[] = [];

  constructor(size = REUSED_READ_BYTES) {
    this.buffer = Buffer.allocUnsafeSlow(size);
  }

  /** The `onread` option for net.connect (every attempt of a retried connect may share it). */
  get onread(): net.OnReadOpts {
    return {
      buffer: this.buffer,
      callback: (n: number, buf: Uint8Array) => {
        const chunk = buf.subarray(0, n);
        if (this.sink) this.sink(chunk);
        else this.early.push(chunk.slice());
        return true;
      },
    };
  }

  /** Where reads go from now on (the Conn's inbound path). */
  attach(sink: (chunk: Uint8Array) => void): void {
    this.sink = sink;
    for (const c of this.early.splice(0)) sink(c);
  }

  /** True when `chunk` is a view of the reused buffer (it must be copied to outlive its read). */
  contains(chunk: Uint8Array): boolean {
    return chunk.buffer === this.buffer.buffer;
  }
}
