// The sentence the CLI table and the Explore view put beside the numbers:
// the fold's round time against direct's, per topology, with the numbers.
import type { SweepResult } from './types';

const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

/** One sentence on the fold's time benefit: direct's median over fold's, per topology run in both. */
export function foldBenefit(r: SweepResult): string | null {
  const parts: string[] = [];
  for (const fold of r.cases.filter((c) => c.mode === 'fold' && c.roundsCompleted > 0)) {
    const direct = r.cases.find(
      (c) => c.mode === 'direct' && c.topology === fold.topology && c.roundsCompleted > 0,
    );
    if (!direct || fold.roundMs.median <= 0) continue;
    const k = Math.max(...fold.ranksPerHost);
    parts.push(
      `${fold.topology}: fold ${ms(fold.roundMs.median)} ms vs direct ${ms(direct.roundMs.median)} ms = ${(direct.roundMs.median / fold.roundMs.median).toFixed(2)}x (K=${k})`,
    );
  }
  if (parts.length === 0) return null;
  const shaped = r.spec.uplinkBandwidth
    ? `With each host uplink shaped to ${(r.spec.uplinkBandwidth / 1e6).toFixed(0)} MB/s`
    : 'Unshaped (loopback, all tiers share the cores)';
  return `${shaped}, median round time: ${parts.join('; ')}.`;
}
