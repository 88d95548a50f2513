// Smoke test: `relay-lab bench --json` in a tiny configuration has the floor,
// the stage breakdown and the scale section's keys (figures are never asserted:
// they are ratios measured on a quiet machine, not in npm test).
import { describe, expect, it } from 'vitest';
import { runBench } from '../bench';

describe('bench JSON (tiny configuration)', () => {
  it('reports the round floor, each mode as a fraction of it, the stages and a scale section', async () => {
    const r = await runBench({
      verifyBytes: 64 * 1024,
      foldBytes: 64 * 1024,
      foldFrames: 2,
      loopbackBytes: 256 * 1024,
      roundModelBytes: 4096,
      hosts: 1,
      ranksPerHost: 2,
      rounds: 2,
      smallRounds: 2,
      smallWarmup: 1,
      roundWarmup: 1,
      tap: false,
      scale: { grid: [[1, 1]], models: [4096], modelsTopology: [1, 1], rounds: 1 },
    });
    expect(r.round.floorMs).toBeGreaterThan(0);
    expect(r.round.floor.fold.derivation).toMatch(/floor = max\(critical path/);
    expect(Object.keys(r.round.floor.fold.terms)).toContain('macRelayVerify');
    for (const mode of [r.round.fold, r.round.direct]) {
      expect(mode.verdict).toBe('ok');
      expect(mode.ofFloor).toBeGreaterThan(0);
      expect(Number.isFinite(mode.ofFloor)).toBe(true);
    }
    // Fold mode: every stage of the critical path was seen in the engine's events and the tap's units.
    expect(Object.keys(r.round.fold.stages.medianMs).sort()).toEqual(
      [
        'broadcast',
        'consensus',
        'controller',
        'fanOut',
        'rankEncodeSend',
        'rankVerify',
        'relayReceiveVerifyFold',
        'uplink',
      ].sort(),
    );
    expect(r.round.fold.stages.sumOfMediansMs).toBeGreaterThan(0);
    // Direct mode: no relay, the ranks' frames go straight to the controller.
    expect(Object.keys(r.round.direct.stages.medianMs).sort()).toEqual(
      ['consensus', 'controller', 'fanOut', 'rankEncodeSend', 'rankVerify'].sort(),
    );
    if (process.platform === 'linux') {
      // Engine and both ranks were sampled.
      expect(r.round.fold.memory!.processes).toBeGreaterThanOrEqual(3);
      expect(r.round.fold.memory!.peakTreeRssBytes).toBeGreaterThan(r.round.fold.memory!.engineHwmBytes / 2);
    }
    // The engine's GCs while its rounds ran: counted from V8's events, per round.
    expect(Object.keys(r.round.fold.engineGc).sort()).toEqual(
      ['major', 'majorPauseMs', 'majorPerRound', 'minor', 'pauseMs'].sort(),
    );
    expect(r.round.fold.engineGc.majorPerRound).toBe(r.round.fold.engineGc.major / 3);
    // The warm-up rounds ran and are in no figure.
    expect(r.round.fold.warmupRounds).toBe(1);
    expect(r.round.fold.msPerRound).toHaveLength(2);
    // The small model against its floor: the critical path (two processes ping-ponging) or its
    // messages' CPU over the cores, whichever is larger.
    const small = r.round.small;
    expect(small.verdict).toBe('ok');
    expect(small.msPerRound).toHaveLength(2);
    expect(small.roundTrip.medianUs).toBeGreaterThan(0);
    expect(small.roundTrip.cpuPerMessageUs).toBeGreaterThan(0);
    expect(small.floor.criticalPathMs).toBeCloseTo((small.hops / 2) * (small.roundTrip.medianUs / 1000), 9);
    expect(small.floor.messages).toBe(4 * 1 * 2 + 3 * 1);
    expect(small.floorMs).toBe(Math.max(small.floor.criticalPathMs, small.floor.workMs));
    expect(small.ofFloor).toBeGreaterThan(0);
    const scale = r.scale!;
    expect(scale.byRanks.points).toHaveLength(1);
    expect(scale.byRanks.points[0].verdict).toBe('ok');
    expect(scale.byBytes.points[0].modelBytes).toBe(4096);
    expect(scale.byRanks.roundMsPerRank).toHaveProperty('slope');
    expect(scale.byBytes.roundMsPerMiB).toHaveProperty('steps');
  }, 120_000);
});
