// The tap's side of its decode worker: each connection's bytes are copied
// once into the turn's batch (chunk-batch.ts) and handed to the worker, and
// its units come back as messages. What is in flight to the worker is
// bounded per connection; past the bound the bytes
// are counted, not queued, and reach the decoder as a named gap. If the
// worker cannot start (no built bundle) or dies, the tap decodes in its own
// thread as before and says so once.
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Direction } from '@shared/lab/state';
import type { TraceLink } from '../lab/trace/format';
import { packageRoot } from '../engine/rank-process';
import type { ConnEndpoints } from './link-naming';
import type { DecodedUnit } from './stream-decoder';
import type { FromWorker, ToWorker, WorkerDecodeOptions } from './decode-worker-protocol';
import { ChunkBatcher } from './chunk-batch';

/** What the proxy needs of a connection's decoding side, wherever it runs. */
export interface DecodeSide {
  /** True when observe copies what it keeps (a chunk read into a reused buffer may then be passed as is). */
  readonly copiesChunks?: boolean;
  observe(dir: Direction, chunk: Uint8Array): void;
  ended(dir: Direction, by: 'client' | 'server', reset: boolean): void;
  dispose(): void;
}

export interface DecodeCallbacks {
  onUnit(link: TraceLink, u: DecodedUnit): void;
  onClose?(link: TraceLink | null, by: 'client' | 'server', reset: boolean, t: number): void;
  onLog?(level: 'info' | 'warn' | 'error', message: string): void;
}

export function decodeWorkerPath(): string | null {
  const override = process.env.RELAY_LAB_TAP_WORKER;
  if (override) return fs.existsSync(override) ? override : null;
  try {
    const file = path.join(packageRoot(), 'out', 'node', 'tap-decode-worker.mjs');
    return fs.existsSync(file) ? file : null;
  } catch {
    return null;
  }
}

export class DecodeWorker {
  private readonly worker: Worker;
  private readonly conns = new Map<number, { cb: DecodeCallbacks; inFlight: number }>();
  private readonly flushes = new Map<number, () => void>();
  private nextFlush = 0;
  private readonly batcher = new ChunkBatcher((b) =>
    this.postNow({ type: 'chunks', bytes: b.bytes, segments: b.segments }, [b.bytes.buffer as ArrayBuffer]),
  );
  dead: string | null = null;

  constructor(
    file: string,
    private readonly now: () => number,
    private readonly onDeath: (why: string) => void,
  ) {
    this.worker = new Worker(file);
    this.worker.unref();
    this.worker.on('message', (m: FromWorker) => this.receive(m));
    this.worker.on('error', (e) => this.die(`the decode worker failed: ${e.message}`));
    this.worker.on('exit', (code) => this.die(`the decode worker exited (${code})`));
  }

  private die(why: string): void {
    if (this.dead) return;
    this.dead = why;
    for (const f of this.flushes.values()) f();
    this.flushes.clear();
    this.onDeath(why);
  }

  private receive(m: FromWorker): void {
    switch (m.type) {
      case 'unit':
        this.conns.get(m.conn)?.cb.onUnit(m.link, m.unit);
        break;
      case 'close':
        this.conns.get(m.conn)?.cb.onClose?.(m.link, m.by, m.reset, m.t);
        break;
      case 'ack': {
        const c = this.conns.get(m.conn);
        if (c) c.inFlight -= m.bytes;
        break;
      }
      case 'log':
        for (const c of this.conns.values()) {
          c.cb.onLog?.(m.level, m.message);
          break;
        }
        break;
      case 'flushed':
        this.flushes.get(m.id)?.();
        this.flushes.delete(m.id);
        break;
      case 'buffer':
        this.batcher.giveBack(m.buffer);
        break;
    }
  }

  /** Any message but chunks: the chunks gathered so far go first, so nothing overtakes them. */
  private post(m: ToWorker): void {
    this.batcher.flush();
    this.postNow(m);
  }

  private postNow(m: ToWorker, transfer?: ArrayBuffer[]): void {
    if (!this.dead) this.worker.postMessage(m, transfer);
  }

  open(
    conn: number,
    options: WorkerDecodeOptions,
    ends: ConnEndpoints,
    cb: DecodeCallbacks,
    maxInFlight: number,
  ): DecodeSide {
    const state = { cb, inFlight: 0 };
    this.conns.set(conn, state);
    this.post({ type: 'open', conn, options, ends });
    const lost: Record<Direction, number> = { up: 0, down: 0 };
    return {
      copiesChunks: true,
      observe: (dir, chunk) => {
        const t = this.now();
        if (state.inFlight + chunk.length > maxInFlight) {
          lost[dir] += chunk.length;
          return;
        }
        if (lost[dir] > 0) {
          this.post({ type: 'lost', conn, dir, t, bytes: lost[dir] });
          lost[dir] = 0;
        }
        // One copy, into the turn's batch: the socket's buffer may be a slice of a shared pool.
        state.inFlight += chunk.length;
        this.batcher.add(conn, dir, t, chunk);
      },
      ended: (dir, by, reset) => this.post({ type: 'end', conn, dir, by, reset, t: this.now() }),
      dispose: () => this.post({ type: 'dispose', conn }),
    };
  }

  /** Every unit of what was sent so far decoded and delivered. */
  flush(): Promise<void> {
    if (this.dead) return Promise.resolve();
    const id = this.nextFlush++;
    return new Promise((resolve) => {
      this.flushes.set(id, resolve);
      this.post({ type: 'flush', id });
    });
  }

  /** Forgets a connection once its close has been delivered (its last messages may still come). */
  forget(conn: number): void {
    this.conns.delete(conn);
  }

  async terminate(): Promise<void> {
    this.dead ??= 'terminated';
    await this.worker.terminate();
  }
}
