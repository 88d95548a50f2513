// Coalesces the session's event batches for one client: at most one message
// per frame interval, and never an unbounded queue when the client is slow.
// Record events merge into one (the oldest records beyond the cap are
// counted into droppedBefore, not kept); only the newest links and snapshot
// events matter, so older ones are dropped.
import type { LabBatch, LabEvent } from '@shared/lab/contract';

export const FRAME_MS = 16;
export const MAX_PENDING_RECORDS = 5000;
/**
 * Events of every kind one client may have pending. Rounds, findings, logs
 * (and the links each round keeps) would otherwise pile up without bound
 * while a client does not read (a frozen background tab).
 */
export const MAX_PENDING_EVENTS = 10_000;
/** Event kinds that may be dropped, oldest first, past MAX_PENDING_EVENTS (the rest are one of a kind). */
const DROPPABLE: ReadonlySet<LabEvent['type']> = new Set(['round', 'finding', 'log', 'links']);

export class EventCoalescer {
  private pending: LabEvent[] = [];
  private dropped = 0;

  add(batch: LabBatch): void {
    for (const ev of batch.events) this.addOne(ev);
    if (this.pending.length > MAX_PENDING_EVENTS) this.trim();
  }

  /** Drops the oldest droppable events down to 90% of the cap (so trimming is not paid on every add). */
  private trim(): void {
    let excess = this.pending.length - Math.floor(MAX_PENDING_EVENTS * 0.9);
    this.pending = this.pending.filter((ev) => {
      if (excess > 0 && DROPPABLE.has(ev.type)) {
        excess--;
        this.dropped++;
        return false;
      }
      return true;
    });
  }

  get empty(): boolean {
    return this.pending.length === 0;
  }

  take(): LabBatch {
    const events = this.pending;
    this.pending = [];
    if (this.dropped > 0) {
      events.unshift({
        type: 'log',
        level: 'warn',
        message: `${this.dropped} older events were dropped while this window was not keeping up`,
      });
      this.dropped = 0;
    }
    return { events };
  }

  private addOne(ev: LabEvent): void {
    // A resetting snapshot (a trace seek, back to live) makes everything pending before it moot.
    if (ev.type === 'snapshot' && ev.reset) {
      const view = this.pending.filter((p) => p.type === 'view');
      this.pending = [...view, ev];
      return;
    }
    if (ev.type === 'links') {
      // The savings chart reads the counters at each round report: a links
      // event that a round follows is kept (a trace seek carries many).
      const at = this.pending.findLastIndex((p) => p.type === 'links');
      if (at >= 0 && !this.pending.slice(at + 1).some((p) => p.type === 'round')) this.pending.splice(at, 1);
      this.pending.push(ev);
      return;
    }
    if (ev.type === 'snapshot' || ev.type === 'view') {
      this.pending = this.pending.filter((p) => p.type !== ev.type);
      this.pending.push(ev);
      return;
    }
    if (ev.type === 'records') {
      // At most one records event is pending: new records join it.
      const at = this.pending.findIndex((p) => p.type === 'records');
      let merged: Extract<LabEvent, { type: 'records' }> = ev;
      if (at >= 0) {
        const prev = this.pending.splice(at, 1)[0] as Extract<LabEvent, { type: 'records' }>;
        merged = {
          type: 'records',
          records: prev.records.concat(ev.records),
          droppedBefore: prev.droppedBefore + ev.droppedBefore,
        };
      }
      const over = merged.records.length - MAX_PENDING_RECORDS;
      if (over > 0)
        merged = {
          type: 'records',
          records: merged.records.slice(over),
          droppedBefore: merged.droppedBefore + over,
        };
      this.pending.push(merged);
      return;
    }
    this.pending.push(ev);
  }
}

/**
 * Sends coalesced batches through `send` no more often than every FRAME_MS,
 * and holds them while `backlogged()` says the socket has not drained.
 */
export class FrameBatcher {
  private readonly coalescer = new EventCoalescer();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;

  constructor(
    private readonly send: (batch: LabBatch) => void,
    private readonly backlogged: () => boolean = () => false,
  ) {}

  push(batch: LabBatch): void {
    if (this.closed) return;
    this.coalescer.add(batch);
    this.schedule();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.closed || this.coalescer.empty) return;
      if (this.backlogged()) {
        this.schedule();
        return;
      }
      this.send(this.coalescer.take());
    }, FRAME_MS);
  }
}
