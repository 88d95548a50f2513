// The round floor's arithmetic (a pure function; no timing measured here).
import { describe, expect, it } from 'vitest';
import { roundFloor, type MachineRates } from './floor';
import { smallRoundFloor } from './round-trip';

const rates: MachineRates = {
  socketBytesPerMs: 1000,
  hmacBytesPerMs: 500,
  copyBytesPerMs: 4000,
  foldBytesPerMs: 2000,
  cores: 2,
};

describe('roundFloor', () => {
  it('adds every term at its rate and takes the larger of the critical path and the cores bound', () => {
    const f = roundFloor({ hosts: 2, ranksPerHost: 4, frameBytes: 1000, mode: 'fold' }, rates);
    // Engine: sockets (8 + 2 + 2 + 8) frames at 1 ms; MACs at 2 ms: relays verify 8, sign 2 x 2
    // HostFrames (footer and record tag), the controller verifies 2 x 2 and signs the consensus's
    // 2, the relays check the Broadcast's tag 2; folds (8 + 2) at 0.5 ms, copies (2 + 1) at 0.25 ms.
    expect(f.engineMs).toBeCloseTo(20 + 40 + 5 + 0.75, 9);
    // Ranks: MAC encode 8 + verify 8 at 2 ms, reply copy 8 at 0.25 ms.
    expect(f.ranksTotalMs).toBeCloseTo(32 + 2, 9);
    expect(f.criticalPathMs).toBeCloseTo(65.75 + 34 / 8, 9);
    expect(f.allCoresMs).toBeCloseTo((65.75 + 34) / 2, 9);
    expect(f.floorMs).toBeCloseTo(70, 9);
    expect(f.boundBy).toBe('criticalPath');
    expect(f.derivation).toContain('= 70 ms');
  });

  it('with many rank processes on few cores the cores bound wins', () => {
    const f = roundFloor(
      { hosts: 8, ranksPerHost: 8, frameBytes: 1000, mode: 'fold' },
      { ...rates, copyBytesPerMs: 10, cores: 1 },
    );
    expect(f.boundBy).toBe('cores');
    expect(f.floorMs).toBeCloseTo(f.engineMs + f.ranksTotalMs, 9);
  });

  it('direct mode sends every rank frame up unfolded and the relays fold nothing', () => {
    const fold = roundFloor({ hosts: 2, ranksPerHost: 4, frameBytes: 1000, mode: 'fold' }, rates);
    const direct = roundFloor({ hosts: 2, ranksPerHost: 4, frameBytes: 1000, mode: 'direct' }, rates);
    expect(direct.terms.socketUplink.bytes).toBe(4 * fold.terms.socketUplink.bytes);
    expect(direct.terms.foldRelay.bytes).toBe(0);
    expect(direct.terms.foldController.bytes).toBe(8000);
    // Two MACs on each mux-wrapped frame in fold mode; direct's len-framed frames carry one.
    expect(fold.terms.macUplinkEncode.bytes).toBe(4000);
    expect(fold.terms.macControllerVerify.bytes).toBe(4000);
    expect(fold.terms.macConsensus.bytes).toBe(2000);
    expect(direct.terms.macUplinkEncode.bytes).toBe(0);
    expect(direct.terms.macControllerVerify.bytes).toBe(8000);
    expect(direct.terms.macConsensus.bytes).toBe(1000);
  });

  it('scales linearly in the frame size', () => {
    const a = roundFloor({ hosts: 2, ranksPerHost: 4, frameBytes: 1000, mode: 'fold' }, rates);
    const b = roundFloor({ hosts: 2, ranksPerHost: 4, frameBytes: 3000, mode: 'fold' }, rates);
    expect(b.floorMs).toBeCloseTo(3 * a.floorMs, 9);
  });

  it('rejects a rate that is not a positive number with a named error', () => {
    expect(() =>
      roundFloor(
        { hosts: 2, ranksPerHost: 4, frameBytes: 1000, mode: 'fold' },
        { ...rates, hmacBytesPerMs: NaN },
      ),
    ).toThrow(/hmacBytesPerMs must be a positive number/);
    expect(() => roundFloor({ hosts: 0, ranksPerHost: 4, frameBytes: 1000, mode: 'fold' }, rates)).toThrow(
      /hosts must be/,
    );
  });
});

describe('smallRoundFloor', () => {
  it('is the critical path (7 hops at half a round trip) or 4HK + 3H messages of CPU over the cores', () => {
    // 2 x 4: 38 messages of 20 us on 2 cores = 0.38 ms, against 3.5 trips of 60 us = 0.21 ms.
    const f = smallRoundFloor(2, 4, { medianUs: 60, cpuPerMessageUs: 20 }, 2);
    expect(f.criticalPathMs).toBeCloseTo(0.21, 9);
    expect(f.messages).toBe(38);
    expect(f.workMs).toBeCloseTo(0.38, 9);
    expect(f.floorMs).toBeCloseTo(0.38, 9);
    expect(f.boundBy).toBe('work');
    expect(f.derivation).toContain('38 messages');
    // One rank on many cores: the path binds.
    const g = smallRoundFloor(1, 1, { medianUs: 60, cpuPerMessageUs: 20 }, 16);
    expect(g.boundBy).toBe('criticalPath');
    expect(g.floorMs).toBeCloseTo(0.21, 9);
  });
});
