import { describe, expect, it } from 'vitest';
import { RankReadiness } from './rank-readiness';

describe('RankReadiness', () => {
  it('names the ranks that take cues and have not made the round’s gradient', () => {
    const r = new RankReadiness();
    r.prepared(0, 3);
    r.prepared(1, 2);
    // Rank 2 never said it was prepared: it takes no cues and is not waited for.
    expect(r.lagging(3, [0, 1, 2])).toEqual([1]);
    r.prepared(1, 3);
    expect(r.lagging(3, [0, 1, 2])).toEqual([]);
    expect(r.lagging(4, [0, 1, 2])).toEqual([0, 1]);
  });

  it('keeps the latest round a rank prepared and forgets a rank that left', () => {
    const r = new RankReadiness();
    r.prepared(0, 5);
    r.prepared(0, 4);
    expect(r.lagging(5, [0])).toEqual([]);
    expect(r.lagging(6, [0])).toEqual([0]);
    r.forget(0);
    expect(r.lagging(6, [0])).toEqual([]);
  });
});
