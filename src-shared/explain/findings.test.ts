// What the findings' meanings say happens, checked against what the engine
// does (issue 30 item 16): a rank that leaves mid-round does not cost the
// round in progress, "elastic" is explained where it is used, and a blackhole
// is described as what it is (records dropped, no error, the round waiting).
import { describe, expect, it } from 'vitest';
import { FINDING_MEANINGS } from './findings';

describe('finding meanings', () => {
  it('exit: the round in progress ships without the rank that left, not only "from the next round"', () => {
    const t = FINDING_MEANINGS.exit.text;
    expect(t).not.toMatch(/from the next round/);
    expect(t).toMatch(/round in progress/);
    expect(t).toMatch(/ships the round\u2019s HostFrame with the ranks that deposited/);
  });

  it('dead: says what elastic means where it uses the word', () => {
    const t = FINDING_MEANINGS.dead.text;
    expect(t).toMatch(/elastic policy \(/);
    expect(t).toMatch(/goes on without a rank declared dead/);
  });

  it('fault: a blackhole drops records without an error and the round waits; clearing it resends nothing', () => {
    const t = FINDING_MEANINGS.fault.text;
    expect(t).toMatch(/blackhole drops whole records/);
    expect(t).toMatch(/stalls at its barrier/);
    expect(t).toMatch(/never resends/);
  });
});
