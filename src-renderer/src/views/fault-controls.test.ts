import { describe, it, expect } from 'vitest';
import { validateLinkFault } from '@shared/lab/validate';
import { activeFaults, faultOf } from './FaultControls';
import { links } from '../test-fixtures';

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

  it('lists the faults the engine says hold, so a new topology (no faults) lists none', () => {
    const ls = links(() => 0);
    expect(activeFaults(ls)).toEqual({});
    ls[0] = { ...ls[0], fault: { dir: 'up', latencyMs: 50, jitterMs: 10 } };
    ls[2] = { ...ls[2], fault: { dir: 'both', blackhole: true } };
    expect(activeFaults(ls)).toEqual({
      [ls[0].id]: 'latency + jitter (up)',
      [ls[2].id]: 'blackhole (both)',
    });
  });
});
