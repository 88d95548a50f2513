// One of a rank's two sockets after its handshake: len-framed blobs in both
// directions (WIRE.md 3.7). Inbound blobs are gathered and handed over whole
// (a rank parses its reply within exactly the prefix's length).
import type net from 'node:net';
import { encodeLenPrefix } from '@shared/wire/len-frame';
import { Conn } from '../engine/conn';
import type { ReusedReads } from '../engine/reused-reads';
import { FixedReader } from '@shared/wire/fixed-reader';
import { LenFrameReader } from '@shared/wire/len-frame-reader';
import { BlobAssembly } from './blob-assembly';

export class RankLink {
  readonly conn: Conn;
  private blobs: Uint8Array[] = [];
  private waiters: { resolve: (b: Uint8Array) => void; reject: (e: Error) => void }[] = [];
  private failure: Error | null = null;
  private onBlob: ((b: Uint8Array) => void) | null = null;
  /** Set when the socket reads into a reused buffer: blobs are copied into it as they arrive. */
  private readonly assembly: BlobAssembly | null;

  constructor(
    socket: net.Socket,
    private readonly ceiling: number,
    noDelay = true,
    /** The reused buffer the socket's connect was given (its reads are views of it). */
    reads?: ReusedReads,
  ) {
    this.conn = new Conn(socket, { readDir: 'down', noDelay });
    this.assembly = reads ? new BlobAssembly() : null;
    if (reads) this.conn.readsReused(reads);
    this.conn.onClose(() => this.fail(new Error('peer closed the connection')));
  }

  /** Reads a fixed-size reply (the handshake ack), then switches to len-framed blobs. */
  readFixed(n: number): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      const fixed = new FixedReader(n);
      this.waiters.push({ resolve, reject });
      this.conn.setConsumer((chunk) => {
        const { unit, rest } = fixed.push(chunk);
        if (!unit) return;
        this.startFramed();
        this.waiters.shift()?.resolve(unit);
        this.conn.unshift(rest);
      });
    });
  }

  private startFramed(): void {
    const a = this.assembly;
    // Reads of a reused buffer are copied into the blob as they come (one copy, no join).
    const reader = a
      ? new LenFrameReader({
          ceiling: this.ceiling,
          sink: {
            onStart: (len) => a.start(len),
            onChunk: (part) => a.append(part),
            onEnd: () => this.deliver(a.finish()),
          },
        })
      : new LenFrameReader({ ceiling: this.ceiling });
    this.conn.setConsumer((chunk) => {
      try {
        for (const unit of reader.push(chunk)) this.deliver(LenFrameReader.blobOf(unit));
      } catch (e) {
        this.fail(e as Error);
        this.conn.destroy();
      }
    });
  }

  private deliver(blob: Uint8Array): void {
    if (this.onBlob) {
      this.assembly?.lendForever();
      this.onBlob(blob);
    } else if (this.waiters.length > 0) this.waiters.shift()!.resolve(blob);
    else this.blobs.push(blob);
  }

  /** Every inbound blob goes to `fn` from now on (the control channel's reader). */
  listen(fn: (b: Uint8Array) => void): void {
    this.onBlob = fn;
    this.assembly?.lendForever();
    for (const b of this.blobs.splice(0)) fn(b);
  }

  /**
   * The next blob. Asking for it says the caller is done with the one before:
   * with reused reads that blob's memory may then hold the next one.
   */
  next(): Promise<Uint8Array> {
    this.assembly?.releaseHanded();
    if (this.blobs.length > 0) return Promise.resolve(this.hand(this.blobs.shift()!));
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) =>
      this.waiters.push({ resolve: (b) => resolve(this.hand(b)), reject }),
    );
  }

  private hand(blob: Uint8Array): Uint8Array {
    this.assembly?.handed(blob);
    return blob;
  }

  /** Writes the len prefix then the blob's parts (a streamed body). */
  sendBlob(parts: Uint8Array[]): Promise<void> {
    const len = parts.reduce((a, p) => a + p.length, 0);
    this.conn.writer.enqueue([encodeLenPrefix(len, this.ceiling), ...parts]);
    return this.conn.writer.room();
  }

  sendRaw(bytes: Uint8Array): void {
    this.conn.writer.enqueue([bytes]);
  }

  get failed(): Error | null {
    return this.failure;
  }

  private fail(e: Error): void {
    if (this.failure) return;
    this.failure = e;
    for (const w of this.waiters.splice(0)) w.reject(e);
  }

  async close(): Promise<void> {
    await this.conn.writer.end();
  }
}
