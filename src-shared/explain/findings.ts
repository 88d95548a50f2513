// "What does this mean?" for each finding kind: what flodl does in that
// situation, where to look, and the glossary term to read.
import type { FindingKind } from '../lab/records';

export interface FindingMeaning {
  text: string;
  term: string;
  wire: string;
}

/**
 * A stall finding's two messages, built here beside the meaning that explains
 * them both (the round driver words its findings with this; the test checks
 * that the meaning quotes each variant).
 */
export function stallMessage(
  round: number,
  consensusSent: boolean,
  ranks: number[],
  waitedMs: number,
): string {
  const ms = Math.round(waitedMs);
  return consensusSent
    ? `round ${round}: the consensus has not reached rank(s) [${ranks}] after ${ms} ms`
    : `round ${round} barrier has waited ${ms} ms for rank(s) [${ranks}]`;
}

export const FINDING_MEANINGS: Record<FindingKind, FindingMeaning> = {
  hmac: {
    text: 'A unit\u2019s MAC did not verify: it was signed with another salt or its bytes changed on the way. flodl drops the connection ("HMAC verification failed"); select the record and its auth_tag to see what the tag covers.',
    term: 'mac',
    wire: 'WIRE.md 2.3',
  },
  rejected: {
    text: 'A reader refused a unit (bad magic, version, length over the frame ceiling, bad bincode). flodl closes that connection; the verdict on the record names the check, in flodl\u2019s order.',
    term: 'frame-ceiling',
    wire: 'WIRE.md 3.2',
  },
  dead: {
    text: 'A rank was declared dead. The controller stops waiting for it (DeclareDead to its relay). Under the elastic policy (the lab\u2019s default: a round goes on without a rank declared dead instead of waiting for it) the round completes with the ranks that answered, and the consensus weight is the sum of the masses that arrived; under strict every rank is waited for.',
    term: 'elastic',
    wire: 'WIRE.md 4.5',
  },
  stalled: {
    text: 'A round is taking longer than its threshold (set from the measured round times and the interval). Either the fold barrier is still waiting for RoundFrames from the ranks named ("barrier has waited"), or the consensus was reduced and sent but the ranks named have not adopted it yet ("the consensus has not reached rank(s)"): a paused, slow or cut-off rank, or a slow downlink. flodl waits until the rank\u2019s relay reports RankExit or the rank is declared dead; look at the ladder for the missing RoundFrames or Broadcast. When the round completes, the finding is marked resolved.',
    term: 'barrier',
    wire: 'WIRE.md 4.5',
  },
  exit: {
    text: 'A rank left: its loopback socket closed and its relay sent RankExit upstream. The round in progress is not lost: the relay stops waiting for that rank and ships the round\u2019s HostFrame with the ranks that deposited (a RoundFrame the rank finished and verified before it left stays in the sum; one it was still sending is dropped). Later rounds fold without it.',
    term: 'relay',
    wire: 'WIRE.md 4.2',
  },
  mismatch: {
    text: 'The consensus a rank received differs from the lab\u2019s own recomputation of the fold beyond the tolerance. The relay or controller folded something other than the accepted frames; compare the round\u2019s HostFrames and Broadcast.',
    term: 'consensus',
    wire: 'WIRE.md 4.4',
  },
  fault: {
    text:
      'A fault the lab injected (delay, drop, corruption, kill) took effect. It is the cause to compare the other findings with. ' +
      'A blackhole drops whole records on its link and closes nothing, so no reader errs: a round that needs a record it swallowed stalls at its barrier (a stall finding names the ranks behind the link). ' +
      'Those ranks are not declared dead while their control channel still carries their heartbeats, so the round keeps waiting; clearing the blackhole lets later records through but never resends the ones it dropped.',
    term: 'lab-only',
    wire: 'WIRE.md 4',
  },
};
