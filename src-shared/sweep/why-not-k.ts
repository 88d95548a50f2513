// Why fold's round is not K times faster than direct's though its uplink carries about 1/K of the
// bytes: only the stages that move those bytes shrink; the ranks still encode and send K frames
// (on loopback now), and the relay adds its receive, verify and fold. Explore says so beside the
// "fold 2.05x faster (K=4)" sentence and shows both cases' stage medians side by side.
import { ROUND_STAGES, type RoundStage } from '../lab/round-stages';
import { foldVerdict } from './summary';
import type { SweepCase, SweepResult } from './types';

export interface StageRow {
  stage: RoundStage;
  foldMs: number | null;
  directMs: number | null;
}

export interface WhyNotK {
  topology: string;
  k: number;
  speedup: number;
  text: string;
  /** Both cases' stage medians in round order (empty for a sweep saved before stages were measured). */
  rows: StageRow[];
}

const median = (c: SweepCase, s: RoundStage) => c.stages?.medianMs[s] ?? null;

/** Each topology whose fold ran faster than direct but by less than K. */
export function whyNotK(r: SweepResult): WhyNotK[] {
  const out: WhyNotK[] = [];
  for (const fold of r.cases.filter((c) => c.mode === 'fold' && c.roundsCompleted > 0)) {
    const direct = r.cases.find(
      (c) => c.mode === 'direct' && c.topology === fold.topology && c.roundsCompleted > 0,
    );
    if (!direct || fold.roundMs.median <= 0) continue;
    const k = Math.max(...fold.ranksPerHost);
    const speedup = direct.roundMs.median / fold.roundMs.median;
    if (!foldVerdict(fold.roundMs.median, direct.roundMs.median).endsWith('faster') || speedup >= k) continue;
    const rows = ROUND_STAGES.flatMap((stage) => {
      const foldMs = median(fold, stage);
      const directMs = median(direct, stage);
      return foldMs === null && directMs === null ? [] : [{ stage, foldMs, directMs }];
    });
    out.push({
      topology: fold.topology,
      k,
      speedup,
      rows,
      text:
        `${fold.topology}: fold ${speedup.toFixed(2)}x faster, not ${k}x: the fold sends about 1/${k} of the bytes ` +
        'up the host link, but only the stages that carry them shrink. The ranks still encode and send every frame ' +
        '(rankEncodeSend, now on loopback), the relay adds its receive, MAC check and fold (relayReceiveVerifyFold), ' +
        'and the consensus still goes back to every rank; the stage breakdown shows where each case\u2019s round goes.',
    });
  }
  return out;
}
