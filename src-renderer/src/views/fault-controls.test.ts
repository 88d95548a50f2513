import { describe, it, expect } from 'vitest';
import { validateLinkFault } from '@shared/lab/validate';
import { faultOf } from './FaultControls';

describe('fault controls', () => {
  it('build faults the command validator accepts', () => {
    const kinds = ['latency', 'bandwidth', 'slicer', 'stall', 'corruptNext', 'reset', 'blackhole'] as const;
    for (const k of kinds) {
      const f = faultOf(k, 'both', 7, 3);
      expect(validateLinkFault(f)).toEqual(f);
    }
    expect(faultOf('latency', 'up', 50, 10)).toEqual({ dir: 'up', latencyMs: 50, jitterMs: 10 });
    expect(faultOf('slicer', 'down', 0, 2)).toEqual({ dir: 'down', sliceBytes: 1, sliceGapMs: 2 });
  });
});
