import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { RecordRing } from './record-ring';
import { FilteredView } from './filtered-view';
import { record } from '../test-fixtures';

describe('RecordRing', () => {
  it('keeps the newest records up to its capacity and counts the rest', () => {
    const ring = new RecordRing(5);
    ring.push([1, 2, 3].map((s) => record(s)));
    expect(ring.size).toBe(3);
    ring.push([4, 5, 6, 7].map((s) => record(s)));
    expect(ring.size).toBe(5);
    expect(ring.evicted).toBe(2);
    expect(ring.total).toBe(7);
    expect(Array.from({ length: ring.size }, (_, i) => ring.at(i)!.seq)).toEqual([3, 4, 5, 6, 7]);
    expect(ring.oldestSeq).toBe(3);
    expect(ring.findBySeq(6)?.seq).toBe(6);
    expect(ring.findBySeq(2)).toBeUndefined();
    ring.clear();
    expect(ring.size).toBe(0);
    expect(ring.total).toBe(0);
    expect(ring.at(0)).toBeUndefined();
  });

  it("counts the session's units, not the window's: after a reload catch-up and after Clear", () => {
    // Issue 10: after a reload the window said "kept 5,658 of 5,658 seen" while seqs were near 14,000.
    const ring = new RecordRing(100);
    ring.push([13_990, 13_991, 13_992].map((s) => record(s)));
    expect(ring.size).toBe(3);
    expect(ring.sessionSeen).toBe(13_993);
    expect(ring.notKept).toBe(13_990);
    ring.clearKept();
    expect(ring.size).toBe(0);
    expect(ring.sessionSeen).toBe(13_993);
    ring.push([record(13_993)]);
    expect(ring.sessionSeen).toBe(13_994);
    // A new session starts the count over.
    ring.clear();
    expect(ring.sessionSeen).toBe(0);
  });

  it('matches a plain array model for any sequence of pushes (seeded)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 17 }),
        fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 40 }),
        (cap, sizes) => {
          const ring = new RecordRing(cap);
          const model: number[] = [];
          let seq = 0;
          for (const n of sizes) {
            const batch = Array.from({ length: n }, () => record(seq++));
            ring.push(batch);
            model.push(...batch.map((r) => r.seq));
          }
          const kept = model.slice(Math.max(0, model.length - cap));
          expect(Array.from({ length: ring.size }, (_, i) => ring.at(i)!.seq)).toEqual(kept);
          expect(ring.evicted).toBe(model.length - kept.length);
          for (const s of kept) expect(ring.findBySeq(s)?.seq).toBe(s);
        },
      ),
      { seed: 4242, numRuns: 300 },
    );
  });
});

describe('FilteredView', () => {
  it('appends matches incrementally and agrees with a rebuild from the ring (seeded)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.array(fc.array(fc.integer({ min: 0, max: 7 }), { maxLength: 12 }), { maxLength: 30 }),
        (cap, batches) => {
          const ring = new RecordRing(cap);
          const pred = (r: ReturnType<typeof record>) => (r.rank ?? 0) % 2 === 1;
          const view = new FilteredView(pred);
          let seq = 0;
          for (const ranks of batches) {
            const batch = ranks.map((rank) => record(seq++, { rank }));
            ring.push(batch);
            view.append(batch, ring);
          }
          const fresh = new FilteredView(pred);
          fresh.rebuild(ring);
          const seqs = (v: FilteredView) => Array.from({ length: v.length }, (_, i) => v.at(i)!.seq);
          expect(seqs(view)).toEqual(seqs(fresh));
          for (let i = 0; i < view.length; i++) expect(view.indexOfSeq(view.at(i)!.seq)).toBe(i);
        },
      ),
      { seed: 77, numRuns: 300 },
    );
  });

  it('while the person reads (hold), keeps rows the ring evicted, within its bound, and counts what it trims', () => {
    const ring = new RecordRing(10);
    const view = new FilteredView(() => true, 25);
    let seq = 0;
    const push = (n: number, hold: boolean) => {
      const batch = Array.from({ length: n }, () => record(seq++));
      ring.push(batch);
      view.append(batch, ring, hold);
    };
    push(10, false);
    expect(view.length).toBe(10);
    // Reading: 10 more arrive, the ring evicts 10, the view keeps all 20 (the rows on screen stay).
    push(10, true);
    expect(ring.oldestSeq).toBe(10);
    expect([view.at(0)!.seq, view.length, view.trimmed]).toEqual([0, 20, 0]);
    // Past its bound (25 rows) the oldest go, and the count says how many, so the list can keep its place.
    push(10, true);
    expect([view.at(0)!.seq, view.length, view.trimmed]).toEqual([5, 25, 5]);
    // Following again: back to what the ring keeps.
    push(1, false);
    expect([view.at(0)!.seq, view.length, view.trimmed]).toEqual([21, 10, 21]);
    view.rebuild(ring);
    expect(view.trimmed).toBe(0);
  });
});

describe('RecordRing.pin', () => {
  it('finds the selected record after the ring evicted it, until a new session', () => {
    const ring = new RecordRing(3);
    ring.push([record(0), record(1), record(2)]);
    ring.pin(ring.findBySeq(0));
    ring.push([record(3), record(4)]);
    expect(ring.size).toBe(3);
    expect(ring.findBySeq(0)?.seq).toBe(0);
    expect(ring.findBySeq(1)).toBeUndefined();
    ring.clear();
    expect(ring.findBySeq(0)).toBeUndefined();
  });
});

describe('earlier rows read back from the engine', () => {
  it('go before the first row, filtered, once each, and keep the read rows in place', () => {
    const ring = new RecordRing(5);
    ring.push([10, 11, 12, 13, 14].map((s) => record(s)));
    const view = new FilteredView((r) => r.seq % 2 === 0);
    view.rebuild(ring);
    expect(view.length).toBe(3);
    // 5..11 arrive: 10 and 11 are not before the first row; of 5..9, 6 and 8 match.
    const added = view.prepend([5, 6, 7, 8, 9, 10, 11].map((s) => record(s)));
    expect(added).toBe(2);
    expect(Array.from({ length: view.length }, (_, i) => view.at(i)!.seq)).toEqual([6, 8, 10, 12, 14]);
    // The list moves down by the rows put before it (negative trimming).
    expect(view.trimmed).toBe(-2);
    expect(view.indexOfSeq(8)).toBe(1);
    expect(view.prepend([6, 8].map((s) => record(s)))).toBe(0);
  });

  it("takes the ring's capacity from the page's ring=N (a test's), within bounds", async () => {
    const { ringCapacityOf, DEFAULT_RING_CAPACITY } = await import('./record-ring');
    expect(ringCapacityOf('?token=x&ring=300')).toBe(300);
    expect(ringCapacityOf('')).toBe(DEFAULT_RING_CAPACITY);
    expect(ringCapacityOf(undefined)).toBe(DEFAULT_RING_CAPACITY);
    expect(ringCapacityOf('?ring=5')).toBe(DEFAULT_RING_CAPACITY);
    expect(ringCapacityOf('?ring=abc')).toBe(DEFAULT_RING_CAPACITY);
  });
});
