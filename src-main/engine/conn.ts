// One connection as the engine uses it: TCP_NODELAY, exact byte counting
// in both directions, a single consumer of inbound bytes that can be handed
// over from one protocol stage to the next without losing a chunk, and the
// single bounded writer. Any Duplex works (a TCP socket in the lab, an
// in-memory pair in unit tests); TCP-only features apply where the stream has them.
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type { Direction } from '@shared/lab/state';
import { OutboundWriter } from './outbound';
import {
  SHAPER_EARLY_MS,
  Shaper,
  shaperTimerMs,
  corrupt,
  flippedIndex,
  type FaultTarget,
  type LinkFault,
} from './link-fault';
import { PendingBytes } from './tap';
import type { ReceiveArena } from '@shared/fold/receive-arena';
import { readIntoArena } from './arena-reads';
import type { ReusedReads } from './reused-reads';

export type Consumer = (chunk: Uint8Array) => void;

/** A byte an inbound fault flipped: its stream offset, both values and the bytes around it. */
export interface InboundCorruption {
  at: number;
  sent: number;
  received: number;
  windowAt: number;
  windowSent: Uint8Array;
  windowReceived: Uint8Array;
}

/**
 * Inbound bytes handled per event-loop turn, by all the process's
 * connections together, before those that read on pause until the next
 * turn: with many sockets streaming model-sized frames at once (8 ranks into
 * one controller in direct mode), one poll phase could otherwise parse and
 * MAC a MiB per socket, 8 MiB and more in a row, and hold every timer for
 * 20 ms and more. A per-connection budget bounded one socket, not the turn.
 */
export const READ_BUDGET_PER_TURN = 1 << 20;

/** The turn's shared budget: bytes read so far, and the connections paused on it (resumed in order next turn). */
const turn = { bytes: 0, scheduled: false, paused: new Set<Conn>() };

function spendTurnBudget(conn: Conn, n: number): void {
  turn.bytes += n;
  if (!turn.scheduled) {
    turn.scheduled = true;
    setImmediate(() => {
      turn.scheduled = false;
      turn.bytes = 0;
      const paused = [...turn.paused];
      turn.paused.clear();
      for (const c of paused) c.resume('budget');
    });
  }
  if (turn.bytes >= READ_BUDGET_PER_TURN) {
    turn.paused.add(conn);
    conn.pause('budget');
  }
}

export interface ConnOptions {
  /** Which way the bytes this end reads travel (a controller reads 'up'). */
  readDir: Direction;
  counter?: PendingBytes;
  stallMs?: number;
  onWriteError?: (err: Error) => void;
  /** TCP_NODELAY (default on; off only to reproduce the Nagle incident, WIRE.md 6.10). */
  noDelay?: boolean;
  /** Outbound queue bound (default 64 records; Infinity reproduces the unbounded queue, WIRE.md 6.5). */
  queueBound?: number;
}

export class Conn implements FaultTarget {
  readonly writer: OutboundWriter;
  readonly counter: PendingBytes;
  private consumer: Consumer | null = null;
  private held: Uint8Array[] = [];
  private closeListeners: ((hadError: boolean) => void)[] = [];
  private readonly pauses = new Set<string>();
  private inFault: LinkFault | null = null;
  private inShaper: Shaper | null = null;
  /**
   * Inbound bytes a link fault holds back, in arrival order, each with the
   * time it may be delivered. One queue and one timer: a timer per piece
   * would let a later piece overtake an earlier one (Node timers count whole
   * milliseconds), and a reader that sees bytes out of order sees a corrupt frame.
   */
  private inQueue: { at: number; bytes: Uint8Array }[] = [];
  private inTimer: NodeJS.Timeout | null = null;
  private destroyed = false;
  /**
   * The memory the socket reads into when it is not Node's own fresh buffers
   * (the receive arena, readIntoArena; a reused buffer, readsReused): chunks
   * that are views of it must be copied to outlive the consumer's call.
   */
  private readMemory: { contains(chunk: Uint8Array): boolean } | null = null;
  /** The socket closed while a fault still held bytes back: the close is seen after them. */
  private closeHeld: boolean | null = null;
  /** Bytes that arrived on this connection so far (the stream offset of the next chunk). */
  private arrived = 0;
  /** The last bytes an inbound "corrupt next" fault flipped, by stream offset (the reader explains its rejection with them). */
  readonly corruptions: InboundCorruption[] = [];
  closed = false;

  constructor(
    readonly socket: Duplex,
    readonly opts: ConnOptions,
  ) {
    if (socket instanceof net.Socket) socket.setNoDelay(opts.noDelay ?? true);
    this.counter = opts.counter ?? new PendingBytes();
    const writeDir: Direction = opts.readDir === 'up' ? 'down' : 'up';
    this.writer = new OutboundWriter(socket, {
      onWritten: (n) => this.counter.add(writeDir, n),
      onError: (e) => opts.onWriteError?.(e),
      stallMs: opts.stallMs,
      bound: opts.queueBound,
      coalesce: opts.noDelay ?? true,
    });
    socket.on('data', (chunk: Buffer) => this.arrive(chunk));
    // Errors end in 'close'; they are reported there.
    socket.on('error', () => {});
    // net.Socket says whether the close followed an error; other Duplexes say nothing.
    socket.on('close', (hadError?: boolean) => {
      const failed = hadError === true;
      this.closed = true;
      // A delayed link delays the peer's close too: its last bytes come first.
      if (this.inQueue.length > 0 && !this.destroyed) this.closeHeld = failed;
      else this.fireClose(failed);
    });
  }

  private arrive(chunk: Uint8Array): void {
    this.counter.add(this.opts.readDir, chunk.length);
    const at = this.arrived;
    this.arrived += chunk.length;
    if (this.inFault) this.faultedIn(this.keepable(chunk), at);
    else this.deliverInOrder(chunk);
    spendTurnBudget(this, chunk.length);
  }

  /**
   * Reads straight into the fold kernel's receive arena from now on
   * (arena-reads.ts): the consumer then gets views of arena blocks, valid
   * only during its call unless it holds their block (a deposit's staging
   * does). Returns false, changing nothing, where the socket cannot.
   */
  readIntoArena(arena: ReceiveArena): boolean {
    if (!(this.socket instanceof net.Socket) || this.readMemory) return false;
    const letGo = readIntoArena(this.socket, arena, (chunk) => this.arrive(chunk));
    if (!letGo) return false;
    this.readMemory = arena;
    this.socket.once('close', letGo);
    return true;
  }

  /**
   * Takes the socket's reads from the reused buffer its connect was given
   * (reused-reads.ts): the consumer then gets views valid only during its
   * call, as with the arena.
   */
  readsReused(reads: ReusedReads): void {
    this.readMemory = reads;
    reads.attach((chunk) => this.arrive(chunk));
  }

  /** `chunk`, or a copy of it when it is a view of reused memory that must outlive the consumer's call. */
  private keepable(chunk: Uint8Array): Uint8Array {
    return this.readMemory?.contains(chunk) ? chunk.slice() : chunk;
  }

  private deliver(chunk: Uint8Array): void {
    if (this.consumer) this.consumer(chunk);
    else this.held.push(this.keepable(chunk));
  }

  /** What this end reads, through the link fault: dropped, corrupted, delayed, sliced. */
  private faultedIn(chunk: Uint8Array, at: number): void {
    const f = this.inFault!;
    if (f.blackhole) return;
    if (f.corruptNext) {
      f.corruptNext = false;
      const sent = chunk;
      chunk = corrupt(chunk);
      const i = flippedIndex(chunk);
      if (i >= 0) {
        const from = Math.max(0, i - 16);
        const to = Math.min(chunk.length, i + 17);
        this.corruptions.push({
          at: at + i,
          sent: sent[i],
          received: chunk[i],
          windowAt: at + from,
          windowSent: sent.slice(from, to),
          windowReceived: chunk.slice(from, to),
        });
        if (this.corruptions.length > 8) this.corruptions.shift();
      }
    }
    if (!this.inShaper?.shapes) return this.deliverInOrder(chunk);
    for (const piece of this.inShaper.plan(chunk, performance.now())) this.inQueue.push(piece);
    this.drainHeldBack();
  }

  /** Delivers now, unless earlier bytes are still held back by a fault (then after them). */
  private deliverInOrder(chunk: Uint8Array): void {
    if (this.inQueue.length === 0) return this.deliver(chunk);
    this.inQueue.push({ at: 0, bytes: this.keepable(chunk) });
  }

  /** Delivers every held-back piece that is due, in order, and waits for the next one. */
  private drainHeldBack(): void {
    if (this.inTimer) clearTimeout(this.inTimer);
    this.inTimer = null;
    while (this.inQueue.length > 0 && !this.destroyed) {
      const wait = this.inQueue[0].at - performance.now();
      if (wait >= SHAPER_EARLY_MS) {
        // A timer that fires before the piece is within SHAPER_EARLY_MS only re-arms.
        this.inTimer = setTimeout(() => this.drainHeldBack(), shaperTimerMs(wait));
        return;
      }
      this.deliver(this.inQueue.shift()!.bytes);
    }
    if (this.closeHeld !== null && (this.inQueue.length === 0 || this.destroyed))
      this.fireClose(this.closeHeld);
  }

  private fireClose(hadError: boolean): void {
    this.closeHeld = null;
    this.dropHeldBack();
    const listeners = this.closeListeners;
    this.closeListeners = [];
    for (const l of listeners) l(hadError);
  }

  private dropHeldBack(): void {
    if (this.inTimer) clearTimeout(this.inTimer);
    this.inTimer = null;
    this.inQueue = [];
  }

  /** Applies a link fault at this end: reads that travel `readDir`, writes the other way. */
  setFault(fault: LinkFault | null): void {
    if (fault?.reset) {
      if (this.socket instanceof net.Socket) this.socket.resetAndDestroy();
      else this.socket.destroy();
      return;
    }
    const writeDir: Direction = this.opts.readDir === 'up' ? 'down' : 'up';
    const inbound = fault && (fault.dir === 'both' || fault.dir === this.opts.readDir) ? { ...fault } : null;
    const outbound = fault && (fault.dir === 'both' || fault.dir === writeDir) ? { ...fault } : null;
    this.inFault = inbound;
    this.inShaper = inbound ? new Shaper(inbound, this.opts.readDir) : null;
    this.writer.setFault(outbound, writeDir);
  }

  /** An inbound "corrupt next" fault waits for its chunk: what is being read now may be hit. */
  get corruptArmed(): boolean {
    return this.inFault?.corruptNext === true;
  }

  /** Bytes that have arrived on this connection so far (before any fault holds them back). */
  get bytesArrived(): number {
    return this.arrived;
  }

  /** The TCP endpoints (the tap shows them); none for an in-memory stream. */
  get endpoints(): { remoteAddress?: string; remotePort?: number; localPort?: number } {
    const s = this.socket;
    return s instanceof net.Socket
      ? { remoteAddress: s.remoteAddress, remotePort: s.remotePort, localPort: s.localPort }
      : {};
  }

  /** Hands inbound bytes to `consumer`, first those that arrived while nobody consumed. */
  setConsumer(consumer: Consumer | null): void {
    this.consumer = consumer;
    if (consumer && this.held.length > 0) {
      const held = this.held;
      this.held = [];
      for (const c of held) {
        if (this.consumer !== consumer) {
          this.held.push(c);
          continue;
        }
        consumer(c);
      }
    }
  }

  /** Puts bytes back in front of the inbound stream (a stage read past its end). */
  unshift(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (this.consumer) this.consumer(bytes);
    else this.held.unshift(this.keepable(bytes));
  }

  onClose(listener: (hadError: boolean) => void): void {
    if (this.closed && this.closeHeld === null) queueMicrotask(() => listener(false));
    else this.closeListeners.push(listener);
  }

  send(...parts: Uint8Array[]): boolean {
    return this.writer.enqueue(parts);
  }

  /** Destroys the socket; bytes a fault still holds back are never delivered. */
  destroy(): void {
    this.destroyed = true;
    this.dropHeldBack();
    if (this.closeHeld !== null) this.fireClose(this.closeHeld);
    this.socket.destroy();
  }

  /** Pauses reading for a reason (several may hold at once: backpressure, the per-turn budget). */
  pause(reason = 'caller'): void {
    this.pauses.add(reason);
    this.socket.pause();
  }
  resume(reason = 'caller'): void {
    this.pauses.delete(reason);
    if (this.pauses.size === 0 && !this.closed) this.socket.resume();
  }
}

export function listen(host = '127.0.0.1', port = 0): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer({ noDelay: true });
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

export function serverPort(server: net.Server): number {
  const a = server.address();
  if (!a || typeof a === 'string') throw new Error('server is not listening on TCP');
  return a.port;
}

export function closeServer(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

export interface ConnectOptions {
  attempts?: number;
  intervalMs?: number;
  isCancelled?: () => boolean;
  /** Reads into the caller's buffer (net.connect's onread; see ReusedReads). */
  onread?: net.OnReadOpts;
}

/** connect_with_retry: 60 attempts x 500 ms by default (WIRE.md 4.2, 6.9). */
export async function connectWithRetry(
  host: string,
  port: number,
  opts: ConnectOptions = {},
): Promise<net.Socket> {
  const attempts = opts.attempts ?? 60;
  const interval = opts.intervalMs ?? 500;
  let last: Error | null = null;
  for (let i = 0; i < attempts; i++) {
    if (opts.isCancelled?.()) throw new Error('connect cancelled');
    try {
      return await new Promise<net.Socket>((resolve, reject) => {
        const s = net.connect({ host, port, noDelay: true, ...(opts.onread ? { onread: opts.onread } : {}) });
        s.once('connect', () => {
          s.off('error', reject);
          resolve(s);
        });
        s.once('error', reject);
      });
    } catch (e) {
      last = e as Error;
      await new Promise((r) => setTimeout(r, interval));
    }
  }
  throw new Error(`could not connect to ${host}:${port} after ${attempts} attempts: ${last?.message}`);
}
