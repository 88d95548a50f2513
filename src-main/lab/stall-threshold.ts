// When a round counts as stalled. A fixed threshold misfires: round 0 takes
// about 1.5 s while the rank processes warm up, a 4 MiB model takes ~0.5 s a
// round on a quiet machine and 0.5-3 s on a loaded 2-core one (measured: 40
// default rounds headless next to a running lab and other engineers' tests), and the user's round
// interval sets the pace the eye expects. So the threshold follows the
// measured rounds: several times the typical recent round, and at least twice
// the slow end of the recent spread, never below the floor plus the interval;
// before any round has completed it is a warm-up allowance.

/** How many times the typical (median) recent round a round may take before it is called stalled. */
export const STALL_FACTOR = 4;
/** How many times the slow end (90th percentile) of the recent rounds a round may take. */
export const STALL_SPREAD_FACTOR = 3;
/** Recent rounds the typical duration and spread are taken from. */
export const STALL_HISTORY = 16;
/**
 * The threshold for round 0, before any round time is known: round 0 includes
 * the ranks' first allocation of the model and the sockets' first bytes. It
 * took 1.5 s on a quiet machine and just over 5 s in a default start while
 * other engineers' suites ran (the ranks run niced): 15 s, half the default
 * staleness, so a rank wedged in round 0 is still named before it is declared dead.
 */
export const STALL_WARMUP_MS = 15_000;

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * (sorted.length - 1)))];
}

/**
 * The stall threshold for the next round, in ms. The median and the 90th
 * percentile ignore the slowest rounds of the history, so one stalled round
 * (which ends only when its rank is declared dead) does not raise the bar for
 * the next stall. `intervalMs` is the pause the user set between rounds: a
 * round is not called stalled before it took the floor plus that pause.
 */
export function stallThresholdMs(
  floorMs: number,
  recentDurationsMs: readonly number[],
  intervalMs = 0,
): number {
  const base = floorMs + Math.max(0, intervalMs);
  const recent = recentDurationsMs.slice(-STALL_HISTORY).filter((d) => Number.isFinite(d) && d >= 0);
  if (recent.length === 0) return Math.max(base, STALL_WARMUP_MS);
  const sorted = [...recent].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return Math.max(base, STALL_FACTOR * median, STALL_SPREAD_FACTOR * quantile(sorted, 0.9));
}
