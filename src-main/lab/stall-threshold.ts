// When a round counts as stalled. A fixed threshold misfires on a model whose
// rounds simply take long (a 4 MiB model takes ~1.5 s a round on a loaded
// 2-core machine, past a 1 s threshold every round): a round is stalled when
// it takes several times what the recent rounds took, and never before the
// configured floor.

/** How many times the typical recent round a round may take before it is called stalled. */
export const STALL_FACTOR = 3;
/** Recent rounds the typical duration is taken from. */
export const STALL_HISTORY = 8;

/**
 * The stall threshold for the next round: the floor, or STALL_FACTOR times the
 * median of the last STALL_HISTORY round durations, whichever is larger. The
 * median keeps one stalled round from raising the bar for the next stall.
 */
export function stallThresholdMs(floorMs: number, recentDurationsMs: readonly number[]): number {
  const recent = recentDurationsMs.slice(-STALL_HISTORY).filter((d) => Number.isFinite(d) && d >= 0);
  if (recent.length === 0) return floorMs;
  const sorted = [...recent].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return Math.max(floorMs, STALL_FACTOR * median);
}
