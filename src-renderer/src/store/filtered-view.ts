// The records list shows a filtered window onto the ring. It is kept
// incrementally: new records that match are appended, records evicted from
// the ring are trimmed from the front, and a new filter rebuilds from the ring.
// While the person reads older rows (the list not following), rows the ring
// evicts are held, up to a bound, so what they look at does not move away.
import type { UnitRecord } from '@shared/lab/records';
import type { RecordRing } from './record-ring';

export type RecordPredicate = (r: UnitRecord) => boolean;

/** Rows a view may hold in all, evicted ones included, while the list does not follow (memory stays bounded). */
export const MAX_HELD_ROWS = 40_000;

export class FilteredView {
  rows: UnitRecord[] = [];
  private head = 0;
  /** Rows dropped from the front since the view was last rebuilt: the list moves its scroll position by as many. */
  trimmed = 0;

  constructor(
    private predicate: RecordPredicate,
    private readonly maxHeld = MAX_HELD_ROWS,
  ) {}

  get length(): number {
    return this.rows.length - this.head;
  }

  at(i: number): UnitRecord | undefined {
    return this.rows[this.head + i];
  }

  indexOfSeq(seq: number): number {
    let lo = this.head;
    let hi = this.rows.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = this.rows[mid].seq;
      if (s === seq) return mid - this.head;
      if (s < seq) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  setPredicate(predicate: RecordPredicate, ring: RecordRing): void {
    this.predicate = predicate;
    this.rebuild(ring);
  }

  rebuild(ring: RecordRing): void {
    const rows: UnitRecord[] = [];
    ring.forEach((r) => {
      if (this.predicate(r)) rows.push(r);
    });
    this.rows = rows;
    this.head = 0;
    this.trimmed = 0;
  }

  /**
   * Appends the new records that match. `hold`: keep rows the ring evicted
   * (the person is reading them), as long as the view holds at most maxHeld rows.
   */
  append(records: readonly UnitRecord[], ring: RecordRing, hold = false): void {
    for (const r of records) if (this.predicate(r)) this.rows.push(r);
    if (hold) this.dropFront(this.length - this.maxHeld);
    else this.trim(ring.oldestSeq);
  }

  /**
   * Puts earlier records (read back from the engine) before the first row: those that match
   * and are older than it. Counted as negative trimming, so the list keeps the rows the person
   * reads where they are. Returns how many rows were added.
   */
  prepend(records: readonly UnitRecord[]): number {
    const first = this.at(0)?.seq ?? Infinity;
    const add = records.filter((r) => r.seq < first && this.predicate(r));
    if (add.length === 0) return 0;
    this.rows = [...add, ...this.rows.slice(this.head)];
    this.head = 0;
    this.trimmed -= add.length;
    return add.length;
  }

  /** Drops rows whose records the ring no longer keeps. */
  trim(oldestSeq: number): void {
    let n = 0;
    while (this.head + n < this.rows.length && this.rows[this.head + n].seq < oldestSeq) n++;
    this.dropFront(n);
  }

  private dropFront(n: number): void {
    if (n <= 0) return;
    this.head += n;
    this.trimmed += n;
    // Compact now and then so the array does not grow without bound.
    if (this.head > 4096 && this.head > this.rows.length / 2) {
      this.rows = this.rows.slice(this.head);
      this.head = 0;
    }
  }
}
