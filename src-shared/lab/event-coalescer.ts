// The one coalescer between the tap and the window (paced by
// src-main/lab/frame-batcher.ts): at most one batch per frame interval, and
// never an unbounded queue when a listener is slow.
// Record events merge into one (the oldest records beyond the cap are
// counted into droppedBefore, not kept); only the newest links and snapshot
// events matter, so older ones are dropped. Pure; the timer that paces it
// is src-main/lab/frame-batcher.ts.
import type { LabBatch, LabEvent } from './contract';

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

type RecordsEvent = Extract<LabEvent, { type: 'records' }>;

/** Keeps the newest MAX_PENDING_RECORDS records and counts the rest into droppedBefore. */
function trimRecords(ev: RecordsEvent): void {
  const over = ev.records.length - MAX_PENDING_RECORDS;
  if (over <= 0) return;
  ev.records.splice(0, over);
  ev.droppedBefore += over;
}

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
    for (const ev of events) if (ev.type === 'records') trimRecords(ev);
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
      // The pending event owns its array, so records are appended in place
      // (one record per add at tap rate must not copy the whole list).
      const at = this.pending.findIndex((p) => p.type === 'records');
      let merged: RecordsEvent;
      if (at >= 0) {
        merged = this.pending.splice(at, 1)[0] as RecordsEvent;
        for (const r of ev.records) merged.records.push(r);
        merged.droppedBefore += ev.droppedBefore;
      } else merged = { type: 'records', records: ev.records.slice(), droppedBefore: ev.droppedBefore };
      // Trimmed at twice the cap here and to the cap in take(): amortised, not per record.
      if (merged.records.length > 2 * MAX_PENDING_RECORDS) trimRecords(merged);
      this.pending.push(merged);
      return;
    }
    this.pending.push(ev);
  }
}
