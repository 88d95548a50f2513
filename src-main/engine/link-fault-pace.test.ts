import { describe, expect, it } from 'vitest';
import { SHAPER_PACE_MIN_BYTES, Shaper } from './link-fault';

const bytes = (n: number) => new Uint8Array(n);

describe('a bandwidth-capped piece is delivered as it would arrive, not all at its end', () => {
  it('in parts of about a millisecond of the link, each at its last byte, the last at the whole wire time', () => {
    // 256 KiB at 50 MB/s: 5.24 ms on the wire, in parts of 50,000 B (1 ms each).
    const parts = new Shaper({ dir: 'down', bandwidth: 50_000_000 }).plan(bytes(256 * 1024), 0);
    expect(parts.map((p) => p.bytes.length)).toEqual([50_000, 50_000, 50_000, 50_000, 50_000, 12_144]);
    expect(parts.map((p) => p.at)).toEqual([1, 2, 3, 4, 5, (256 * 1024 * 1000) / 50_000_000]);
    // Views of the piece, in order: nothing copied, nothing lost.
    expect(parts.every((p, i) => i === 0 || p.at > parts[i - 1].at)).toBe(true);
  });

  it('latency is paid once per piece, not once per part', () => {
    const parts = new Shaper({ dir: 'down', bandwidth: 2_000_000, latencyMs: 10 }).plan(bytes(6000), 0);
    expect(parts.map((p) => p.at)).toEqual([11, 12, 13]);
  });

  it('a slow link keeps parts of at least SHAPER_PACE_MIN_BYTES; the slicer’s gap comes between slices only', () => {
    const slow = new Shaper({ dir: 'up', bandwidth: 1000 }).plan(bytes(3 * SHAPER_PACE_MIN_BYTES), 0);
    expect(slow.map((p) => p.bytes.length)).toEqual([1024, 1024, 1024]);
    const sliced = new Shaper({ dir: 'up', bandwidth: 2_000_000, sliceBytes: 4000, sliceGapMs: 5 }).plan(
      bytes(8000),
      0,
    );
    expect(sliced.map((p) => [p.bytes.length, p.at])).toEqual([
      [2000, 1],
      [2000, 2],
      [2000, 8],
      [2000, 9],
    ]);
  });
});
