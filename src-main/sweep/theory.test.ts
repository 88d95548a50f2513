// The sweep's theory is computed from the wire format alone; these pin it to
// the codec and to the engine's model layout, so "measured equals theory" in
// a sweep is a comparison of two independent things.
import { describe, expect, it } from 'vitest';
import { roundFrameWireLen, type RoundFrame } from '@shared/wire/round-frame';
import { DTYPE_BF16, DTYPE_F32 } from '@shared/wire/constants';
import {
  dataDownBytes,
  dataUpBytes,
  roundFrameBytes,
  roundStats,
  shapedRoundMs,
  theoryShapes,
} from '@shared/sweep/theory';
import {
  AUTO_WARMUP,
  maxWarmupRounds,
  parseModes,
  parseTopologies,
  parseTopology,
  parseWarmup,
  topologyLabel,
  validateSweepSpec,
  warmupOver,
} from '@shared/sweep/spec';
import { modelLayout } from '@shared/synthetic';

function frameOf(modelBytes: number, dtype: number): RoundFrame {
  const elem = dtype === DTYPE_BF16 ? 2 : 4;
  return {
    roundKind: 0,
    weight: 1,
    tensors: modelLayout(modelBytes).shapes.map((dims) => ({
      dtype,
      dims,
      data: new Uint8Array(dims.reduce((a, b) => a * b, 1) * elem),
    })),
  };
}

describe('sweep theory', () => {
  it.each([4, 100, 1024, 4096, 256 * 1024, 1_000_003, 4 * 1024 * 1024])(
    'F for a %i B model is the codec length of the engine layout (f32 and bf16)',
    (bytes) => {
      expect(theoryShapes(bytes)).toEqual(modelLayout(bytes).shapes);
      expect(roundFrameBytes(bytes, 'f32')).toBe(roundFrameWireLen(frameOf(bytes, DTYPE_F32)));
      expect(roundFrameBytes(bytes, 'bf16')).toBe(roundFrameWireLen(frameOf(bytes, DTYPE_BF16)));
    },
  );

  it('per host per round: fold 25+F, forward K(25+F), direct K(4+F); down once per host through a relay', () => {
    const f = roundFrameBytes(256 * 1024, 'f32');
    expect(f).toBe(17 + 2 + 8 + 8 + 256 * 1024 + 8);
    expect(dataUpBytes('fold', 4, f)).toBe(25 + f);
    expect(dataUpBytes('forward', 4, f)).toBe(4 * (25 + f));
    expect(dataUpBytes('direct', 4, f)).toBe(4 * (4 + f));
    expect(dataDownBytes('fold', 4, f)).toBe(25 + f);
    expect(dataDownBytes('forward', 4, f)).toBe(25 + f);
    expect(dataDownBytes('direct', 4, f)).toBe(4 * (4 + f));
  });

  it('a shaped round is the slowest host up plus down at the rate, plus latency each way', () => {
    expect(shapedRoundMs([1000, 500], [1000, 1000], 1000, 5)).toBe(2010);
    expect(shapedRoundMs([1000], [1000], undefined)).toBeNull();
    expect(roundStats([5, 1, 3, 2, 4])).toEqual({ median: 3, p90: 5 });
    expect(roundStats([1, 2, 3, 4])).toEqual({ median: 2.5, p90: 4 });
  });
});

describe('sweep choices', () => {
  it('reads even and uneven topologies and labels them back', () => {
    expect(parseTopologies('1x8,2x4, 4+2+1')).toEqual([[8], [4, 4], [4, 2, 1]]);
    expect(topologyLabel([4, 4])).toBe('2x4');
    expect(topologyLabel([4, 2, 1])).toBe('4+2+1');
    expect(parseModes('fold,direct,fold')).toEqual(['fold', 'direct']);
  });

  it('names what is wrong', () => {
    expect(() => parseTopology('2y4')).toThrow(/must look like 2x4/);
    expect(() => parseTopology('0x4')).toThrow(/1\.\.16 hosts/);
    expect(() => parseTopology('8x9')).toThrow(/at most 64 ranks/);
    expect(() => parseModes('fold,relay')).toThrow(/mode 'relay'/);
    const ok = { topologies: [[2]], modes: ['fold'], modelBytes: 1024, dtype: 'f32', rounds: 2 };
    expect(validateSweepSpec(ok)).toEqual({ ...ok, warmupRounds: 'auto' });
    expect(validateSweepSpec({ ...ok, warmupRounds: 0 }).warmupRounds).toBe(0);
    expect(() => validateSweepSpec({ ...ok, warmupRounds: 101 })).toThrow(
      /warmupRounds must be 'auto' or 0..100/,
    );
    expect(() => validateSweepSpec({ ...ok, warmupRounds: 'some' })).toThrow(/warmupRounds/);
    expect(() => validateSweepSpec({ ...ok, warmupRounds: 1.5 })).toThrow(/warmupRounds/);
    expect(() => validateSweepSpec({ ...ok, extra: 1 })).toThrow(/unknown field 'extra'/);
    expect(() => validateSweepSpec({ ...ok, uplinkBandwidth: 5 })).toThrow(/uplinkBandwidth/);
    expect(() => validateSweepSpec({ ...ok, rounds: 0 })).toThrow(/rounds/);
  });
});

describe('warm-up', () => {
  it("a count ends at that round; 'auto' after at least 2 rounds, at 40 rounds or 3 s of warm-up", () => {
    expect(warmupOver(3, 2, 60_000)).toBe(false);
    expect(warmupOver(3, 3, 0)).toBe(true);
    expect(warmupOver(0, 0, 0)).toBe(true);
    // A quick case warms up for 40 rounds.
    expect(warmupOver('auto', 39, 900)).toBe(false);
    expect(warmupOver('auto', 40, 900)).toBe(true);
    // A slow one (a big model) ends on time, but never before its second round.
    expect(warmupOver('auto', 1, 10_000)).toBe(false);
    expect(warmupOver('auto', 2, 10_000)).toBe(true);
    expect(warmupOver('auto', 5, AUTO_WARMUP.maxMs - 1)).toBe(false);
    expect(maxWarmupRounds('auto')).toBe(AUTO_WARMUP.maxRounds);
    expect(maxWarmupRounds(4)).toBe(4);
  });

  it("parses 'auto' or a count, and names anything else", () => {
    expect(parseWarmup(' Auto ')).toBe('auto');
    expect(parseWarmup('0')).toBe(0);
    expect(parseWarmup('12')).toBe(12);
    for (const bad of ['', '-1', '1.5', 'two', '101'])
      expect(() => parseWarmup(bad)).toThrow(/warm-up must be 'auto' or 0..100 rounds/);
  });
});
