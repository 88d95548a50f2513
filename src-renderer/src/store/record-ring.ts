// The record buffer lives here, outside React state: a fixed-capacity ring of
// the most recent records. Older records are counted, not kept, so memory
// stays bounded however long the engine runs.
import type { UnitRecord } from '@shared/lab/records';

export const DEFAULT_RING_CAPACITY = 20_000;

/**
 * The ring's capacity: the default, or a page address's `ring=N` (100 to the default), which the
 * end-to-end tests use to see units leave the window's ring within seconds instead of minutes.
 */
export function ringCapacityOf(search: string | undefined): number {
  const n = Number(new URLSearchParams(search ?? '').get('ring') ?? NaN);
  return Number.isInteger(n) && n >= 100 && n <= DEFAULT_RING_CAPACITY ? n : DEFAULT_RING_CAPACITY;
}

export class RecordRing {
  private readonly slots: (UnitRecord | undefined)[];
  private start = 0;
  private count = 0;
  /** Records pushed out of the ring to make room. */
  evicted = 0;
  /** Records the engine (or a transport) dropped before they reached us. */
  droppedUpstream = 0;
  /** Bumped on every change, so views can tell when to re-read. */
  version = 0;
  /**
   * Units the session has seen, by its own count: the newest seq + 1 (seqs
   * number every unit of a session from 0). A window that connected late, was
   * reloaded or cleared its list still shows the session's count, not its own.
   */
  private sessionCount = 0;

  constructor(readonly capacity = DEFAULT_RING_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError('ring capacity must be a positive integer');
    this.slots = new Array(capacity);
  }

  get size(): number {
    return this.count;
  }

  /** Every record seen since the last clear, kept or not. */
  get total(): number {
    return this.count + this.evicted;
  }

  push(records: readonly UnitRecord[]): void {
    if (records.length === 0) return;
    for (const r of records) {
      if (r.seq + 1 > this.sessionCount) this.sessionCount = r.seq + 1;
      const end = (this.start + this.count) % this.capacity;
      this.slots[end] = r;
      if (this.count < this.capacity) this.count++;
      else {
        this.start = (this.start + 1) % this.capacity;
        this.evicted++;
      }
    }
    this.version++;
  }

  /** The i-th kept record, oldest first. */
  at(i: number): UnitRecord | undefined {
    if (i < 0 || i >= this.count) return undefined;
    return this.slots[(this.start + i) % this.capacity];
  }

  /** Seq of the oldest record still kept (Infinity when empty). */
  get oldestSeq(): number {
    return this.count ? this.at(0)!.seq : Infinity;
  }

  /** Seq of the newest record kept (null when empty). */
  get lastSeq(): number | null {
    return this.count ? this.at(this.count - 1)!.seq : null;
  }

  /**
   * The record the person selected: still found by seq after the ring evicts
   * it (the list holds rows the person is reading; the inspector looks its
   * record up here).
   */
  private pinned: UnitRecord | undefined;
  pin(record: UnitRecord | undefined): void {
    this.pinned = record;
  }

  /** Finds a kept (or pinned) record by seq (records arrive in seq order, so this is a binary search). */
  findBySeq(seq: number): UnitRecord | undefined {
    if (this.pinned?.seq === seq) return this.pinned;
    let lo = 0;
    let hi = this.count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const r = this.at(mid)!;
      if (r.seq === seq) return r;
      if (r.seq < seq) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  /** Units the session has seen (kept here or not): its count, never the window's. */
  get sessionSeen(): number {
    return Math.max(this.sessionCount, this.total + this.droppedUpstream);
  }

  /** Units of the session this window does not hold: before it connected, evicted, cleared or dropped. */
  get notKept(): number {
    return this.sessionSeen - this.count;
  }

  forEach(fn: (r: UnitRecord) => void): void {
    for (let i = 0; i < this.count; i++) fn(this.at(i)!);
  }

  /** The user's Clear: drops the kept records; the session's count stays. */
  clearKept(): void {
    const seen = this.sessionCount;
    this.clear();
    this.sessionCount = seen;
  }

  /** A new session (or a trace view): everything starts over. */
  clear(): void {
    this.sessionCount = 0;
    this.pinned = undefined;
    this.slots.fill(undefined);
    this.start = 0;
    this.count = 0;
    this.evicted = 0;
    this.droppedUpstream = 0;
    this.version++;
  }
}
