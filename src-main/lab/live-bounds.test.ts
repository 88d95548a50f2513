// A live session (rounds = 0) is left open all day: what its engine keeps per
// round must stop growing (issue 30 item 17). Its round reports live on in the
// window and the trace; the driver keeps only the recent ones (the stall
// threshold needs 16), where it kept 10,000 (about 15 MB, 80 minutes of the
// default session).
import { afterEach, expect, it } from 'vitest';
import { LIVE_REPORTS_KEPT } from './round-driver';
import { TopologySession } from './topology-session';

let session: TopologySession | null = null;
afterEach(async () => {
  await session?.stop();
  session = null;
});

it(
  'a live session keeps a bounded number of round reports, the latest among them',
  { timeout: 240_000 },
  async () => {
    session = new TopologySession();
    session.subscribe(() => {});
    await session.start({ ranksPerHost: [1], modelBytes: 1024, rounds: 0, roundIntervalMs: 0 });
    const target = 2 * LIVE_REPORTS_KEPT + 8;
    while (session.snapshot().roundsCompleted < target) await new Promise((r) => setTimeout(r, 50));
    const reports = session.requireRounds().reports;
    expect(reports.length).toBeLessThan(2 * LIVE_REPORTS_KEPT);
    expect(reports.length).toBeGreaterThanOrEqual(LIVE_REPORTS_KEPT);
    expect(reports.at(-1)!.round).toBe(session.requireRounds().round - 1);
  },
);
