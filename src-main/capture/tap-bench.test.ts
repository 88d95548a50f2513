// The tap bench runs its whole path on tiny sizes (its figures are measured by `relay-lab bench`, never asserted).
import { describe, expect, it } from 'vitest';
import { benchTap } from './tap-bench';

describe('tap bench', () => {
  it('moves a small uplink through the tap, decodes every unit and times echo round trips', async () => {
    const r = await benchTap({
      frameBytes: 64 * 1024,
      frames: 4,
      pings: 20,
      recordBytes: 64 * 1024,
      recordRepeats: 2,
      captureFloor: false,
    });
    expect(r.unitsDecoded).toBe(6);
    expect(r.unitsUndecodable).toBe(0);
    for (const v of [r.rawMiBPerSec, r.tapMiBPerSec, r.tapOverRaw, r.rttUs.rawMedian, r.rttUs.tapMedian])
      expect(Number.isFinite(v) && v > 0).toBe(true);
    // The one-record figure through `relay-lab tap` as its own process, and through a tap in this thread.
    expect(r.record.tapIn).toBe('process');
    expect(r.recordTapInThread?.tapIn).toBe('thread');
    for (const rec of [r.record, r.recordTapInThread!]) {
      expect(rec.decodedInWorker).toBe(true);
      for (const v of [rec.tapOverDirect, rec.bareHopOverDirect, rec.tapOverBareHop])
        expect(Number.isFinite(v) && v > 0).toBe(true);
    }
  });
});
