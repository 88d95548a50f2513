// The stages of one round on its critical path, in the order a round passes
// them (src-main/lab/bench/stages.ts measures them; the bench and every sweep
// case report their medians). Direct mode has no relay, so it shows
// rankEncodeSend, controller, consensus, fanOut and rankVerify only.
export const ROUND_STAGES = [
  'rankEncodeSend',
  'relayReceiveVerifyFold',
  'uplink',
  'controller',
  'consensus',
  'broadcast',
  'fanOut',
  'rankVerify',
] as const;
export type RoundStage = (typeof ROUND_STAGES)[number];

/** Each stage's median ms over the measured rounds, its share of their sum, and the sum. */
export interface StageSummary {
  medianMs: Partial<Record<RoundStage, number>>;
  share: Partial<Record<RoundStage, number>>;
  sumOfMediansMs: number;
}

/** The measured stages in round order with their median ms (a mode shows only the stages it has). */
export function stageMedians(s: StageSummary | undefined): { stage: RoundStage; ms: number }[] {
  return ROUND_STAGES.flatMap((stage) => {
    const ms = s?.medianMs[stage];
    return ms === undefined ? [] : [{ stage, ms }];
  });
}

/** The stage with the largest median (where a round's time goes first), or null when none was measured. */
export function slowestStage(s: StageSummary | undefined): { stage: RoundStage; ms: number } | null {
  let best: { stage: RoundStage; ms: number } | null = null;
  for (const m of stageMedians(s)) if (!best || m.ms > best.ms) best = m;
  return best;
}
