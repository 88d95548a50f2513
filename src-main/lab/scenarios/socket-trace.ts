// A trace of a socket-level reproduction (a writer and a reader on one
// loopback connection, no topology): the bytes the scenario put on the wire
// are decoded from the side, as the tap does (capture/stream-decoder), and
// written as an ordinary trace, so the window draws it and Inspect opens it.
// The scenario names the decisive unit itself (the reader's view, e.g. the
// partial frame a read timeout dropped), since the wire alone cannot tell.
// A scenario that opens several connections in turn (a capture, then its
// replay) records them as one link that reconnects, as the tap does.
import type { Direction } from '@shared/lab/state';
import type { Mac } from '@shared/wire/mac';
import type { WireErrorCode } from '@shared/wire/errors';
import { CaptureTraceWriter, captureTraceHeader } from '../../capture/trace-out';
import { StreamDecoder } from '../../capture/stream-decoder';
import type { TraceLink } from '../trace/format';
import { TraceWriter } from '../trace/ndjson';
import type { ScenarioContext, DecisiveHint } from './types';

/** How the side decoder reads a scenario's connection (defaults as the tap's). */
export interface SocketTraceOptions {
  /** The ControlFrame version the connection speaks (control-replay's v1 run). */
  controlVersion?: number;
  /** Bytes kept of each unit (default 64 KiB). */
  snapLen?: number;
  /** Units above this are checked streamed (default the tap's, 64 KiB). */
  wholeLimit?: number;
}

export class SocketTrace {
  private readonly out: CaptureTraceWriter;
  private decoder: StreamDecoder;
  private readonly t0 = performance.now();
  /** Trace seq of each decoded unit, per direction, in order (across reconnects). */
  readonly units: Record<Direction, number[]> = { up: [], down: [] };
  private seq = 0;

  private constructor(
    file: string,
    private readonly ctx: ScenarioContext,
    private readonly mac: Mac,
    salt: Uint8Array,
    private link: TraceLink,
    private readonly opts: SocketTraceOptions,
  ) {
    const snapLen = opts.snapLen ?? 64 * 1024;
    this.out = new CaptureTraceWriter(
      TraceWriter.toFile(
        file,
        captureTraceHeader({
          salt,
          startedAt: Date.now(),
          producer: 'relay-lab scenario',
          snapLen,
          links: [link],
        }),
      ),
    );
    this.decoder = this.newDecoder();
  }

  private newDecoder(): StreamDecoder {
    return new StreamDecoder({
      mac: this.mac,
      snapLen: this.opts.snapLen ?? 64 * 1024,
      wholeLimit: this.opts.wholeLimit,
      controlVersion: this.opts.controlVersion,
      onUnit: (u) => {
        this.units[u.dir].push(this.seq++);
        this.out.unit(this.link, u);
      },
    });
  }

  /** A trace when the window asked for one (ctx.traceFile), else null: the CLI's runs stay as they were. */
  static open(
    ctx: ScenarioContext,
    mac: Mac,
    salt: Uint8Array,
    port: number,
    link: Partial<TraceLink> = {},
    opts: SocketTraceOptions = {},
  ): SocketTrace | null {
    if (!ctx.traceFile) return null;
    return new SocketTrace(
      ctx.traceFile,
      ctx,
      mac,
      salt,
      {
        id: 'h0.uplink.data',
        channel: 'data',
        kind: 'uplink',
        from: 'writer',
        to: 'reader',
        host: 0,
        clientAddr: '127.0.0.1',
        clientPort: 40000,
        serverAddr: '127.0.0.1',
        serverPort: port,
        ...link,
      },
      opts,
    );
  }

  /** Bytes that went over the connection (`up`: writer to reader). */
  feed(dir: Direction, chunk: Uint8Array): void {
    this.decoder.push(dir, new Uint8Array(chunk), performance.now() - this.t0);
  }

  log(message: string): void {
    this.out.log('info', message, performance.now() - this.t0);
  }

  /**
   * Bytes a reader was handed that the wire did not carry in that order (a
   * reader that dropped some): decoded as the wire is, on a lane of its own
   * whose name says it is the reader's view. Returns the trace seq of each
   * unit, in order. The wire's own lane keeps what was on the wire.
   */
  readerView(bytes: Uint8Array, lane: { id: string; to: string }): number[] {
    const link: TraceLink = { ...this.link, id: lane.id, to: lane.to };
    const seqs: number[] = [];
    const t = performance.now() - this.t0;
    const d = new StreamDecoder({
      mac: this.mac,
      snapLen: this.opts.snapLen ?? 64 * 1024,
      wholeLimit: this.opts.wholeLimit,
      controlVersion: this.opts.controlVersion,
      onUnit: (u) => {
        seqs.push(this.seq++);
        // The side decoder's words are about skipping to a boundary; on this lane a reader read them.
        const read =
          u.verdict === 'undecodable' && u.kind === 'skipped'
            ? { ...u, summary: `${u.length} bytes the reader read as a unit start` }
            : u;
        this.out.unit(link, read);
      },
    });
    d.push('up', bytes, t);
    d.end('up', t);
    return seqs;
  }

  /** Names the decisive unit by its trace seq (a unit of readerView). */
  decisiveSeq(seq: number, hint: Omit<DecisiveHint, 'seq'>): void {
    this.ctx.decisive?.({ seq, ...hint });
  }

  /** Names the decisive unit: the n-th unit decoded in `dir`, with why and the bytes to mark. */
  decisive(dir: Direction, n: number, hint: Omit<DecisiveHint, 'seq'>): void {
    const seq = this.units[dir][Math.min(n, this.units[dir].length - 1)];
    if (seq !== undefined) this.ctx.decisive?.({ seq, ...hint });
  }

  /**
   * The same link on a new connection from `clientPort` (the trace announces
   * its endpoints again); the previous connection's streams end here.
   */
  reconnect(clientPort: number): void {
    this.endStreams();
    this.link = { ...this.link, clientPort };
    this.decoder = this.newDecoder();
  }

  /**
   * Ends the trace. `cut` says why a unit still in progress never completed
   * (default: the peer closed mid-frame).
   */
  async close(cut?: { code: WireErrorCode; why: string }): Promise<void> {
    this.endStreams(cut);
    await this.out.close();
  }

  private endStreams(cut?: { code: WireErrorCode; why: string }): void {
    const t = performance.now() - this.t0;
    this.decoder.end('up', t, cut);
    this.decoder.end('down', t, cut);
  }
}

/** Copies every chunk a socket writes into the trace (the writer's side of the wire). */
export function tapWrites(
  socket: { write: (...args: never[]) => boolean },
  trace: SocketTrace | null,
  dir: Direction,
): void {
  if (!trace) return;
  const write = socket.write.bind(socket) as (chunk: unknown, ...rest: unknown[]) => boolean;
  (socket as unknown as { write: typeof write }).write = (chunk: unknown, ...rest: unknown[]) => {
    if (chunk instanceof Uint8Array) trace.feed(dir, chunk);
    else if (typeof chunk === 'string') trace.feed(dir, Buffer.from(chunk));
    return write(chunk, ...rest);
  };
}
