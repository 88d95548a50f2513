import { describe, expect, it } from 'vitest';
import type { Finding } from '@shared/lab/records';
import { currentStall, isResolvedStall, lastCompletedRound, stallRound } from './stalls';

const stall = (round: number | undefined, message: string): Finding => ({
  id: 1,
  t: 0,
  severity: 'warn',
  kind: 'stalled',
  message,
  ranks: [3],
  ...(round !== undefined ? { round } : {}),
});

describe('stall findings', () => {
  it('know their round, from the field or (older traces) from the message', () => {
    expect(stallRound(stall(9, 'whatever'))).toBe(9);
    expect(
      stallRound(stall(undefined, 'round 9: the consensus has not reached rank(s) [3] after 900 ms')),
    ).toBe(9);
    expect(stallRound(stall(undefined, 'round 12 barrier has waited 700 ms for rank(s) [3]'))).toBe(12);
    expect(stallRound({ ...stall(4, 'x'), kind: 'dead' })).toBeNull();
  });

  it('are current while their round is in flight and resolved once it completes', () => {
    const f = stall(9, 'round 9 barrier has waited 700 ms for rank(s) [3]');
    // Round 8 is the last done, the cluster is on round 9: stalled now.
    expect(currentStall([f], lastCompletedRound([], { round: 9 }))).toBe(f);
    expect(isResolvedStall(f, 8)).toBe(false);
    // Round 9 completed (its report came, or the cluster moved on): history.
    expect(currentStall([f], lastCompletedRound([{ round: 9 } as never], { round: 9 }))).toBeNull();
    expect(isResolvedStall(f, lastCompletedRound([], { round: 10 }))).toBe(true);
  });
});
