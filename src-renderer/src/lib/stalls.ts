// A stall finding is about one round: while that round is in flight it is a
// current problem (the toolbar says so), once the round completed it is
// history (kept in the list, marked resolved). One rule for both views.
import type { Finding, RoundReport } from '@shared/lab/records';
import type { SessionSnapshot } from '@shared/lab/state';

/** The round a stall is about: its field, or (traces saved before it existed) its message's "round N". */
export function stallRound(f: Finding): number | null {
  if (f.kind !== 'stalled') return null;
  if (f.round !== undefined) return f.round;
  const m = /^round (\d+)\b/.exec(f.message);
  return m ? Number(m[1]) : null;
}

/** The newest round known complete: the last report, or the one before the round the cluster is on. */
export function lastCompletedRound(
  rounds: readonly RoundReport[],
  snapshot: Pick<SessionSnapshot, 'round'> | null,
): number {
  return Math.max(rounds.at(-1)?.round ?? -1, (snapshot?.round ?? 0) - 1);
}

export function isResolvedStall(f: Finding, completed: number): boolean {
  const r = stallRound(f);
  return r !== null && r <= completed;
}

/** The stall holding the cluster now (its round not complete), newest first; null when rounds flow. */
export function currentStall(findings: readonly Finding[], completed: number): Finding | null {
  for (let i = findings.length - 1; i >= 0; i--) {
    const r = stallRound(findings[i]);
    if (r !== null && r > completed) return findings[i];
  }
  return null;
}
