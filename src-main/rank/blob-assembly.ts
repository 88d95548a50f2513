// Where a rank gathers an inbound blob whose reads are views of a reused
// buffer (ReusedReads): each read is copied once into the blob's memory.
// One buffer is reused from blob to blob, since a rank reads one consensus
// per round and is done with it before it asks for the next (RankLink.next);
// a blob that starts while the previous one may still be in use (queued,
// not yet asked for, or handed to a listener) gets memory of its own, so a
// peer that sends out of turn can never overwrite bytes the rank still reads.

export class BlobAssembly {
  private reusable: Uint8Array | null = null;
  /** 'free': the reusable memory may take the next blob. */
  private state: 'free' | 'filling' | 'queued' | 'handed' | 'forever' = 'free';
  private blob: Uint8Array | null = null;
  private got = 0;

  start(len: number): void {
    if (this.state === 'free') {
      if (!this.reusable || this.reusable.length < len) this.reusable = Buffer.allocUnsafeSlow(len);
      this.blob = this.reusable.subarray(0, len);
      this.state = 'filling';
    } else this.blob = Buffer.allocUnsafeSlow(len);
    this.got = 0;
  }

  append(part: Uint8Array): void {
    this.blob!.set(part, this.got);
    this.got += part.length;
  }

  /** The whole blob (a view of the reusable memory, or memory of its own). */
  finish(): Uint8Array {
    const b = this.blob!;
    this.blob = null;
    if (this.state === 'filling' && this.ownsReusable(b)) this.state = 'queued';
    return b;
  }

  /** `blob` went to the caller of next(). */
  handed(blob: Uint8Array): void {
    if (this.state === 'queued' && this.ownsReusable(blob)) this.state = 'handed';
  }

  /** The caller asks for the next blob: the one it was handed is no longer read. */
  releaseHanded(): void {
    if (this.state === 'handed') this.state = 'free';
  }

  /** Blobs go to a listener that may keep them: the reusable memory is never reused again. */
  lendForever(): void {
    this.state = 'forever';
  }

  private ownsReusable(b: Uint8Array): boolean {
    return (
      this.reusable !== null && b.buffer === this.reusable.buffer && b.byteOffset === this.reusable.byteOffset
    );
  }
}
