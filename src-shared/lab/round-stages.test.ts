// The stage summary as the sweep's table and Explore view read it.
import { describe, expect, it } from 'vitest';
import { slowestStage, stageMedians, type StageSummary } from './round-stages';

const direct: StageSummary = {
  // Out of round order on purpose: the readers put them in the round's order.
  medianMs: { rankVerify: 22.26, consensus: 1.13, rankEncodeSend: 20.69, controller: 0.05, fanOut: 0 },
  share: {},
  sumOfMediansMs: 44.13,
};

describe('round stages', () => {
  it('lists a mode’s measured stages in round order and names the longest', () => {
    expect(stageMedians(direct).map((m) => m.stage)).toEqual([
      'rankEncodeSend',
      'controller',
      'consensus',
      'fanOut',
      'rankVerify',
    ]);
    expect(slowestStage(direct)).toEqual({ stage: 'rankVerify', ms: 22.26 });
    expect(slowestStage(undefined)).toBeNull();
    expect(stageMedians(undefined)).toEqual([]);
  });
});
