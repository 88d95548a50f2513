// The lab contract of a topology that runs elsewhere (a Slurm job's watch
// server, src-main/slurm/watch-server.ts), over a WebSocket from this process.
// It never passes off an old picture as live: a dropped link is announced at
// once ('lost', with the time), commands are refused while it is down, and it
// reconnects on its own with backoff; a job that ended says so and stops.
import WebSocket from 'ws';
import type { AnyCommand, LabApi, LabBatch, LabReply, ReplyOf } from '@shared/lab/contract';
import type { ServerMessage } from '../web/protocol';

export type RemoteState = 'connecting' | 'live' | 'lost' | 'ended';

/** The close code a watch server sends when its job's engine ends (no reconnecting after it). */
export const JOB_ENDED_CLOSE = 4000;

export interface RemoteLabOptions {
  address: string;
  token: string;
  onState: (state: RemoteState, since: number, why?: string) => void;
  /** Longest wait between reconnect attempts (default 5 s). */
  maxRetryMs?: number;
}

export class RemoteLab implements LabApi {
  private ws: WebSocket | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, (r: LabReply) => void>();
  private readonly listeners = new Set<(b: LabBatch) => void>();
  private retryMs = 250;
  private closed = false;
  private timer: NodeJS.Timeout | null = null;
  state: RemoteState = 'connecting';
  private everOpen = false;

  /** Resolves when the first connection opens; rejects with the reason it could not. */
  readonly firstOpen: Promise<void>;
  private readonly firstOpenSettle: { resolve: () => void; reject: (e: Error) => void };

  constructor(private readonly opts: RemoteLabOptions) {
    let settle!: { resolve: () => void; reject: (e: Error) => void };
    this.firstOpen = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    // Nobody may be waiting for it (a reconnect's failure is told through onState).
    this.firstOpen.catch(() => {});
    this.firstOpenSettle = settle;
    this.open();
  }

  subscribe(l: (b: LabBatch) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  command<C extends AnyCommand>(cmd: C): Promise<ReplyOf<C['type']>> {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN || this.state !== 'live')
      return Promise.resolve({
        ok: false,
        error: 'NOT_CONNECTED',
        message:
          this.state === 'ended'
            ? `the job at ${this.opts.address} has ended`
            : `the connection to ${this.opts.address} is down (reconnecting)`,
      } as ReplyOf<C['type']>);
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve as (r: LabReply) => void);
      ws.send(JSON.stringify({ id, command: cmd }));
    });
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.ws?.terminate();
  }

  private setState(state: RemoteState, why?: string): void {
    if (this.state === state) return;
    this.state = state;
    this.opts.onState(state, Date.now(), why);
  }

  private emit(b: LabBatch): void {
    for (const l of this.listeners) l(b);
  }

  private open(): void {
    const ws = new WebSocket(`ws://${this.opts.address}/watch?token=${encodeURIComponent(this.opts.token)}`, {
      handshakeTimeout: 10_000,
      maxPayload: 256 * 1024 * 1024,
    });
    this.ws = ws;
    let refused: string | null = null;
    ws.on('unexpected-response', (_req, res) => {
      refused =
        res.statusCode === 403 ? 'the job refused the token' : `the server answered HTTP ${res.statusCode}`;
      ws.terminate();
    });
    ws.on('open', () => {
      this.retryMs = 250;
      this.everOpen = true;
      this.setState('live');
      this.firstOpenSettle.resolve();
      // The whole picture first (what this window showed before is another source), then the diffs.
      void this.command({ type: 'snapshot' }).then((r) => {
        if (r.ok) this.emit({ events: [{ type: 'snapshot', snapshot: r.snapshot, reset: true }] });
      });
    });
    ws.on('message', (data) => {
      let msg: ServerMessage;
      try {
        msg = JSON.parse(data.toString()) as ServerMessage;
      } catch {
        return;
      }
      if (msg.type === 'reply') {
        this.pending.get(msg.id)?.(msg.reply);
        this.pending.delete(msg.id);
      } else if (msg.type === 'batch') {
        // What the job's lab is viewing is not this window's view: the router owns that.
        const events = msg.batch.events.filter((e) => e.type !== 'view');
        if (events.length > 0) this.emit({ events });
      }
    });
    ws.on('error', () => {});
    ws.on('close', (code, reason) => {
      for (const resolve of this.pending.values())
        resolve({
          ok: false,
          error: 'NOT_CONNECTED',
          message: `the connection to ${this.opts.address} closed`,
        });
      this.pending.clear();
      if (this.closed) return;
      if (code === JOB_ENDED_CLOSE) {
        this.setState('ended', reason.toString() || 'the job ended');
        return;
      }
      if (!this.everOpen) {
        // The first attempt failed: a wrong address or token, not a drop; say so and stop.
        const why = refused ?? `nothing answers at ${this.opts.address}`;
        this.closed = true;
        this.setState('ended', why);
        this.firstOpenSettle.reject(new Error(why));
        return;
      }
      this.setState('lost', refused ?? 'connection closed');
      this.timer = setTimeout(() => this.open(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, this.opts.maxRetryMs ?? 5000);
    });
  }
}
