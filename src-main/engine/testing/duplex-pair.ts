// An in-memory connection for unit tests (the pattern of ws's duplex-pair):
// two Duplex ends where what one writes the other reads, delivered on a later
// turn as TCP would. Unlike node:stream's duplexPair, an end closes like a TCP
// socket: end() or destroy() on one side lets the other read what was already
// sent, then see 'end' and 'close' (allowHalfOpen off, as in net.Socket).
import { EventEmitter } from 'node:events';
import { Duplex } from 'node:stream';

class MemoryEnd extends Duplex {
  peer!: MemoryEnd;
  private eofSent = false;

  constructor() {
    super({ allowHalfOpen: false });
  }

  override _read(): void {}

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (e?: Error | null) => void): void {
    // A copy: the reader may keep views of what it got, the writer may reuse its buffer.
    const bytes = Buffer.from(chunk);
    setImmediate(() => {
      if (!this.peer.destroyed) this.peer.push(bytes);
    });
    done();
  }

  override _final(done: (e?: Error | null) => void): void {
    this.sendEof();
    done();
  }

  override _destroy(err: Error | null, done: (e?: Error | null) => void): void {
    this.sendEof();
    done(err);
  }

  private sendEof(): void {
    if (this.eofSent) return;
    this.eofSent = true;
    setImmediate(() => {
      if (!this.peer.destroyed) this.peer.push(null);
    });
  }
}

/** Two connected in-memory ends: [a, b]. */
export function memoryDuplexPair(): [Duplex, Duplex] {
  const a = new MemoryEnd();
  const b = new MemoryEnd();
  a.peer = b;
  b.peer = a;
  return [a, b];
}

/** Stands in for a listening server: connect() hands the other end to 'connection' listeners. */
export class MemoryListener extends EventEmitter {
  closed = false;

  connect(): Duplex {
    const [client, server] = memoryDuplexPair();
    this.emit('connection', server);
    return client;
  }

  close(): void {
    this.closed = true;
  }
}
