// Slow suite (npm run test:slow): model-sized frames through every tier, in
// fold and direct, f32 and bf16, checked by the independent checker, with the
// exact uplink byte ratio.
import { describe, expect, it } from 'vitest';
import { DEFAULT_TOPOLOGY } from '@shared/lab/topology';
import { runTopology } from './run-topology';

const MiB = 1024 * 1024;

describe('model-sized rounds', () => {
  for (const dtype of ['f32', 'bf16'] as const) {
    it(`2 hosts x 4 ranks x 4 MiB, ${dtype}: fold and direct verify, uplink ratio is 1/K plus headers`, async () => {
      const base = {
        ...DEFAULT_TOPOLOGY,
        ranksPerHost: [4, 4],
        modelBytes: 4 * MiB,
        rounds: 2,
        roundIntervalMs: 0,
        dtype,
        stalenessMs: 30_000,
      };
      const fold = await runTopology({ ...base, mode: 'fold' });
      const direct = await runTopology({ ...base, mode: 'direct' });
      expect(fold.verdict).toBe('ok');
      expect(direct.verdict).toBe('ok');
      const elem = dtype === 'bf16' ? 2 : 4;
      const F = 17 + 8 + (2 + 8 + 8 + ((4 * MiB) / 4) * elem);
      const foldData = fold.links.find((l) => l.id === 'h0.uplink.data')!;
      const directData = direct.links
        .filter((l) => /^r[0-3]\.uplink\.data$/.test(l.id))
        .reduce((a, l) => a + l.bytesUp, 0);
      // Setup and teardown bytes are small next to the frames: the ratio stays within 0.1 % of the exact one.
      const exact = (25 + F) / (4 * (4 + F));
      expect(Math.abs(foldData.bytesUp / directData - exact) / exact).toBeLessThan(0.001);
    }, 300_000);
  }
});
