// A trace of a socket-level reproduction (a writer and a reader on one
// loopback connection, no topology): the bytes the scenario put on the wire
// are decoded from the side, as the tap does (capture/stream-decoder), and
// written as an ordinary trace, so the window draws it and Inspect opens it.
// The scenario names the decisive unit itself (the reader's view, e.g. the
// partial frame a read timeout dropped), since the wire alone cannot tell.
import type { Direction } from '@shared/lab/state';
import type { Mac } from '@shared/wire/mac';
import { CaptureTraceWriter, captureTraceHeader } from '../../capture/trace-out';
import { StreamDecoder } from '../../capture/stream-decoder';
import type { TraceLink } from '../trace/format';
import { TraceWriter } from '../trace/ndjson';
import type { ScenarioContext, DecisiveHint } from './types';

export class SocketTrace {
  private readonly out: CaptureTraceWriter;
  private readonly decoder: StreamDecoder;
  private readonly t0 = performance.now();
  /** Trace seq of each decoded unit, per direction, in order. */
  readonly units: Record<Direction, number[]> = { up: [], down: [] };
  private seq = 0;

  private constructor(
    file: string,
    private readonly ctx: ScenarioContext,
    mac: Mac,
    salt: Uint8Array,
    private readonly link: TraceLink,
  ) {
    this.out = new CaptureTraceWriter(
      TraceWriter.toFile(
        file,
        captureTraceHeader({
          salt,
          startedAt: Date.now(),
          producer: 'relay-lab scenario',
          snapLen: 64 * 1024,
          links: [link],
        }),
      ),
    );
    this.decoder = new StreamDecoder({
      mac,
      snapLen: 64 * 1024,
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
  ): SocketTrace | null {
    if (!ctx.traceFile) return null;
    return new SocketTrace(ctx.traceFile, ctx, mac, salt, {
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
    });
  }

  /** Bytes that went over the connection (`up`: writer to reader). */
  feed(dir: Direction, chunk: Uint8Array): void {
    this.decoder.push(dir, new Uint8Array(chunk), performance.now() - this.t0);
  }

  log(message: string): void {
    this.out.log('info', message, performance.now() - this.t0);
  }

  /** Names the decisive unit: the n-th unit decoded in `dir`, with why and the bytes to mark. */
  decisive(dir: Direction, n: number, hint: Omit<DecisiveHint, 'seq'>): void {
    const seq = this.units[dir][Math.min(n, this.units[dir].length - 1)];
    if (seq !== undefined) this.ctx.decisive?.({ seq, ...hint });
  }

  async close(): Promise<void> {
    const t = performance.now() - this.t0;
    this.decoder.end('up', t);
    this.decoder.end('down', t);
    await this.out.close();
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
