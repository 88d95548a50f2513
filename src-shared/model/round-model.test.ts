import { describe, expect, it } from 'vitest';
import { predictRound, ModelInputError, type ModelInput } from './round-model';
import { predictBeyond, checkBeyond, type BeyondInput } from './beyond';
import { REFERENCE_CALIBRATION as cal } from './reference-calibration';
import { roundFrameBytes } from '../sweep/theory';

const MiB = 2 ** 20;
const local = (o: Partial<ModelInput>): ModelInput => ({
  ranksPerHost: [4],
  mode: 'fold',
  modelBytes: MiB,
  dtype: 'f32',
  placement: 'local',
  hostNic: { latencyMs: 0 },
  ...o,
});

describe('round model on this machine', () => {
  it('a shaped fold round is its two uplink transfers plus the CPU stages, bound by the host uplink', () => {
    const F = roundFrameBytes(MiB, 'f32');
    const p = predictRound(local({ hostNic: { bandwidth: 50e6, latencyMs: 0 } }), cal);
    const wire = ((2 * (25 + F)) / 50e6) * 1000;
    expect(p.roundMs).toBeGreaterThan(wire);
    expect(p.roundMs).toBeLessThan(wire * 1.5);
    expect(p.bottleneck.resource).toBe('hostUplink');
    expect(p.stages.find((s) => s.stage === 'uplink')!.boundBy).toBe('hostUplink');
    // Locally the tap sees the Broadcast as written: its shaped transfer shows in fanOut.
    expect(p.stages.find((s) => s.stage === 'fanOut')!.ms).toBeGreaterThan(((25 + F) / 50e6) * 1000);
  });

  it('shaped direct sends K frames per host each way: about K times fold for a big model', () => {
    const nic = { bandwidth: 50e6, latencyMs: 0 };
    const fold = predictRound(local({ modelBytes: 4 * MiB, hostNic: nic }), cal);
    const direct = predictRound(local({ modelBytes: 4 * MiB, hostNic: nic, mode: 'direct' }), cal);
    const lead = direct.roundMs / fold.roundMs;
    expect(lead).toBeGreaterThan(3);
    expect(lead).toBeLessThan(4);
    expect(direct.nicBytes.hostUp).toBe(4 * (4 + fold.frameBytes));
    expect(fold.nicBytes.hostUp).toBe(25 + fold.frameBytes);
  });

  it('latency adds once each way', () => {
    const a = predictRound(local({ hostNic: { bandwidth: 50e6, latencyMs: 0 } }), cal);
    const b = predictRound(local({ hostNic: { bandwidth: 50e6, latencyMs: 5 } }), cal);
    expect(b.roundMs - a.roundMs).toBeCloseTo(10, 6);
  });

  it('ranks outnumbering the cores slow their verify', () => {
    const stage = (k: number) =>
      predictRound(local({ ranksPerHost: [k] }), { ...cal, cores: 2 }).stages.find(
        (s) => s.stage === 'rankVerify',
      )!;
    const many = predictRound(local({ ranksPerHost: [8] }), { ...cal, cores: 64 }).stages.find(
      (s) => s.stage === 'rankVerify',
    )!;
    expect(stage(8).ms).toBeGreaterThan(stage(1).ms);
    expect(many.ms).toBeLessThan(stage(8).ms);
  });

  it('an unshaped round has no NIC terms, only loopback and CPU', () => {
    const p = predictRound(local({}), cal);
    const resources = new Set(p.stages.flatMap((s) => s.terms.map((t) => t.resource)));
    for (const nic of ['hostUplink', 'hostDownlink', 'controllerIngress', 'controllerEgress'] as const)
      expect(resources.has(nic)).toBe(false);
    expect(resources.has('loopback')).toBe(true);
  });

  it('bad input is a named error', () => {
    expect(() => predictRound(local({ ranksPerHost: [] }), cal)).toThrow(ModelInputError);
    expect(() => predictRound(local({ ranksPerHost: [0] }), cal)).toThrow(/ranks per host/);
    expect(() => predictRound(local({ hostNic: { bandwidth: -1, latencyMs: 0 } }), cal)).toThrow(/bandwidth/);
  });
});

const big: BeyondInput = {
  hosts: 512,
  ranksPerHost: 8,
  modelBytes: 2 ** 30,
  dtype: 'f32',
  modes: ['fold', 'direct'],
  hostNic: { bandwidth: 12.5e9, latencyMs: 0 },
  controllerNic: { bandwidth: 12.5e9, latencyMs: 0 },
};

describe('round model beyond this machine', () => {
  const r = predictBeyond(big, cal);
  const fold = r.modes.find((m) => m.mode === 'fold')!;
  const direct = r.modes.find((m) => m.mode === 'direct')!;

  it('512 x 8 ranks, 1 GiB, 100 Gb/s everywhere: the controller ingress bounds both modes, fold leads by near K', () => {
    expect(fold.prediction.bottleneck.resource).toBe('controllerIngress');
    expect(direct.prediction.bottleneck.resource).toBe('controllerIngress');
    expect(fold.prediction.nicBytes.controllerIn).toBe(512 * (25 + fold.prediction.frameBytes));
    expect(direct.prediction.nicBytes.controllerIn).toBe(512 * 8 * (4 + fold.prediction.frameBytes));
    expect(r.lead.direct).toBeGreaterThan(6);
    expect(r.lead.direct).toBeLessThanOrEqual(8);
  });

  it('a controller NIC fast enough moves the bottleneck off the controller for fold, and the lead changes', () => {
    expect(fold.controllerNicToMove).toBeGreaterThan(12.5e9);
    expect(['relayCpu', 'hostUplink']).toContain(fold.afterMove!.bottleneck.resource);
    // The NIC the model names is enough: 10 % above it, the controller NIC no longer bounds.
    const moved = predictBeyond(
      { ...big, controllerNic: { bandwidth: fold.controllerNicToMove! * 1.1, latencyMs: 0 } },
      cal,
    );
    expect(moved.modes[0].prediction.bottleneck.resource).toBe(fold.afterMove!.bottleneck.resource);
    expect(Math.abs(r.leadAfterMove.direct! - r.lead.direct!)).toBeGreaterThan(1);
  });

  it('round time against hosts marks where the bottleneck moves', () => {
    expect(fold.curve[0].hosts).toBe(1);
    expect(fold.curve.at(-1)!.hosts).toBe(4096);
    expect(fold.moves.length).toBeGreaterThan(0);
    const m = fold.moves.find((x) => x.to === 'controllerIngress')!;
    const before = fold.curve[fold.curve.findIndex((c) => c.hosts === m.hosts) - 1];
    expect(before.resource).toBe(m.from);
    // Rounds grow with hosts once the controller's NIC carries them all.
    expect(fold.curve.at(-1)!.roundMs).toBeGreaterThan(fold.curve[0].roundMs);
  });

  it('input out of range is a one-line error naming the range', () => {
    expect(() => checkBeyond({ ...big, hosts: 4097 })).toThrow(
      'hosts must be a whole number from 1 to 4096, got 4097',
    );
    expect(() => checkBeyond({ ...big, ranksPerHost: 17 })).toThrow(/ranks per host .* 1 to 16/);
    expect(() => checkBeyond({ ...big, hostNic: { bandwidth: 10, latencyMs: 0 } })).toThrow(
      /host NIC bandwidth/,
    );
    expect(() => checkBeyond({ ...big, modes: [] })).toThrow(/mode/);
  });
});
