// The sentence the CLI table and the Explore view put beside the numbers:
// the fold's round time against direct's, per topology, with the numbers.
import type { SweepResult } from './types';

const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

/** Medians within this fraction of each other are "about the same": round times vary more than that run to run. */
export const SAME_WITHIN = 0.02;

/**
 * Fold against direct in words that say which way it went: a bare ratio
 * (0.76x) reads as a benefit whichever side of 1 it is on.
 */
export function foldVerdict(foldMs: number, directMs: number): string {
  if (Math.abs(directMs - foldMs) <= SAME_WITHIN * Math.max(foldMs, directMs)) return 'about the same';
  return directMs > foldMs
    ? `fold ${(directMs / foldMs).toFixed(2)}x faster`
    : `fold ${(foldMs / directMs).toFixed(2)}x slower`;
}

/** One sentence on the fold's time benefit: fold's median against direct's, per topology run in both, and which was faster. */
export function foldBenefit(r: SweepResult): string | null {
  const parts: string[] = [];
  for (const fold of r.cases.filter((c) => c.mode === 'fold' && c.roundsCompleted > 0)) {
    const direct = r.cases.find(
      (c) => c.mode === 'direct' && c.topology === fold.topology && c.roundsCompleted > 0,
    );
    if (!direct || fold.roundMs.median <= 0) continue;
    const k = Math.max(...fold.ranksPerHost);
    parts.push(
      `${fold.topology}: fold ${ms(fold.roundMs.median)} ms vs direct ${ms(direct.roundMs.median)} ms, ${foldVerdict(fold.roundMs.median, direct.roundMs.median)} (K=${k})`,
    );
  }
  if (parts.length === 0) return null;
  const shaped = r.spec.uplinkBandwidth
    ? `With each host uplink shaped to ${(r.spec.uplinkBandwidth / 1e6).toFixed(0)} MB/s`
    : 'Unshaped (loopback, all tiers share the cores)';
  return `${shaped}, median round time: ${parts.join('; ')}.`;
}
