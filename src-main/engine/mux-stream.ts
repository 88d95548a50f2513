// The engine's reading end of a mux connection (relay <-> controller or
// coordinator): the codec's MuxReader in streamed mode with MAC verification,
// fed by one Conn, handing each record to whichever handler the connection's
// current stage installed. Every record streams, so records reach handlers in
// wire order; a handler either takes the payload chunk by chunk (a model-sized
// HostFrame or Broadcast) or lets it be gathered. `end` runs only after the
// record's MAC verified (WIRE.md 3.2 step 6), so no handler acts on unverified
// bytes. A stage that ends (the Hello) installs the next handler; records
// after it in the same chunk go to the new one.
import { muxKindOfByte, parseMuxHeader, type MuxHeader } from '@shared/wire/mux';
import { decodeRelayControl, type RelayControlMsg } from '@shared/wire/relay-control';
import type { Mac } from '@shared/wire/mac';
import { MuxReader } from '@shared/wire/mux-reader';
import { ChunkAccumulator } from '@shared/wire/reader-core';
import type { WireError } from '@shared/wire/errors';
import type { Conn } from './conn';
import { unitBuffers } from './buffer-pool';

/** Gathered payloads at least this large come from the pool of recycled unit buffers. */
const POOLED_PAYLOAD_BYTES = 64 * 1024;

/** Where a streamed payload goes; `chunk` gets views into socket chunks (copy to keep past the call). */
export interface PayloadSink {
  chunk(bytes: Uint8Array): void;
}

export interface MuxRecordHandler {
  /** The header is in and passed its checks: a sink for the payload, or null to have it gathered. */
  begin(header: MuxHeader, headerBytes: Uint8Array): PayloadSink | null;
  /** The record is whole and verified; `payload` is the gathered payload (null when a sink took it). */
  end(header: MuxHeader, headerBytes: Uint8Array, payload: Uint8Array | null): void;
  /** A wire error from the reader or a throw from this handler; the stream reads nothing more. */
  fail(e: Error): void;
}

export interface MuxStreamOptions {
  mac: Mac;
  ceiling: number;
  handler: MuxRecordHandler;
  /** The connection's stream offset of the first byte this stream reads (after what earlier stages consumed). */
  streamOffset?: number;
}

export class MuxRecordStream {
  handler: MuxRecordHandler;
  private readonly reader: MuxReader;
  private header: MuxHeader | null = null;
  private headerBytes: Uint8Array | null = null;
  private sink: PayloadSink | null = null;
  private readonly gathered = new ChunkAccumulator();
  private failed = false;
  /**
   * Connection stream offsets of the record being read and of the next one
   * (every byte this stream reads is a record's), to place an inbound
   * fault's flipped byte in its unit.
   */
  private start = 0;
  private next = 0;

  constructor(conn: Conn, opts: MuxStreamOptions) {
    this.handler = opts.handler;
    this.next = opts.streamOffset ?? 0;
    this.reader = new MuxReader({
      ceiling: opts.ceiling,
      mac: opts.mac,
      now: () => performance.now(),
      sink: {
        onStart: (_len, hb) => {
          this.header = parseMuxHeader(hb, { ceiling: opts.ceiling });
          this.headerBytes = hb;
          this.start = this.next;
          this.next += hb.length + this.header.payloadLen;
          this.gathered.clear();
          // A gathered payload (a Broadcast the relay fans out) is joined as it arrives, a model-sized
          // one into a recycled buffer (its consumer gives it back to unitBuffers when done with it).
          const len = this.header.payloadLen;
          this.gathered.expect(len, len >= POOLED_PAYLOAD_BYTES ? (n) => unitBuffers.take(n) : undefined);
          this.sink = this.handler.begin(this.header, hb);
        },
        onChunk: (b) => {
          if (this.sink) this.sink.chunk(b);
          else this.gathered.append(b);
        },
        onEnd: () => {
          const payload = this.sink ? null : this.gathered.take();
          this.sink = null;
          this.handler.end(this.header!, this.headerBytes!, payload);
        },
      },
    });
    conn.setConsumer((chunk) => this.push(chunk));
  }

  /** The stream offset where the record being read (or the last one) began. */
  get recordStart(): number {
    return this.start;
  }

  /** Hands the connection's next records to another stage. */
  handTo(handler: MuxRecordHandler): void {
    this.handler = handler;
  }

  private push(chunk: Uint8Array): void {
    if (this.failed) return;
    try {
      this.reader.push(chunk);
    } catch (e) {
      // Later bytes are ignored: the stream is desynced; the owner closes the connection.
      this.failed = true;
      this.handler.fail(e as Error);
    }
  }

  /** STARVED when a record started and no byte came for `deadlineMs` (WIRE.md 4.1). */
  checkStarvation(now: number, deadlineMs: number): WireError | null {
    return this.failed ? null : this.reader.checkStarvation(now, deadlineMs);
  }
}

/** A record from the controller as a relay uses it, its MAC verified. */
export type UpstreamRecord =
  | { kind: 'Data'; rank: number; payload: Uint8Array }
  | { kind: 'Broadcast'; payload: Uint8Array }
  | { kind: 'HostFrame'; payload: Uint8Array }
  | { kind: 'Control'; msg: RelayControlMsg };

/** The record a verified header and payload make (the MAC was checked by the reader). */
export function upstreamRecord(header: MuxHeader, payload: Uint8Array): UpstreamRecord {
  const kind = muxKindOfByte(header.kind);
  switch (kind) {
    case 'Data':
      return { kind, rank: header.rank, payload };
    case 'Control':
      return { kind, msg: decodeRelayControl(payload) };
    case 'HostFrame':
    case 'Broadcast':
      return { kind, payload };
    default:
      // MuxReader rejects unknown kinds before `end`; kept for the type checker.
      throw new Error(`unknown mux record kind ${header.kind}`);
  }
}
