// The records list shows a filtered window onto the ring. It is kept
// incrementally: new records that match are appended, records evicted from
// the ring are trimmed from the front, and a new filter rebuilds from the ring.
import type { UnitRecord } from '@shared/lab/records';
import type { RecordRing } from './record-ring';

export type RecordPredicate = (r: UnitRecord) => boolean;

export class FilteredView {
  rows: UnitRecord[] = [];
  private head = 0;

  constructor(private predicate: RecordPredicate) {}

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
  }

  append(records: readonly UnitRecord[], ring: RecordRing): void {
    for (const r of records) if (this.predicate(r)) this.rows.push(r);
    this.trim(ring.oldestSeq);
  }

  /** Drops rows whose records the ring no longer keeps. */
  trim(oldestSeq: number): void {
    while (this.head < this.rows.length && this.rows[this.head].seq < oldestSeq) this.head++;
    // Compact now and then so the array does not grow without bound.
    if (this.head > 4096 && this.head > this.rows.length / 2) {
      this.rows = this.rows.slice(this.head);
      this.head = 0;
    }
  }
}
