// What the ranks' states add up to, read the same way by the toolbar and the
// topology's controller line, so neither says "running" or "stopped" when the
// ranks say otherwise.
import type { SessionSnapshot } from '@shared/lab/state';

/** Ranks taking part or able to (starting, alive, paused). */
export function liveRankCount(s: Pick<SessionSnapshot, 'ranks'>): number {
  return s.ranks.filter((r) => r.state === 'alive' || r.state === 'paused' || r.state === 'starting').length;
}

/**
 * Every rank of the session is dead or gone: the controller's reduce has ended ("no connection
 * has a live rank") and no round can run, though the session is up until Stop.
 */
export function noRankLeft(s: Pick<SessionSnapshot, 'ranks'>): boolean {
  return s.ranks.length > 0 && liveRankCount(s) === 0;
}
