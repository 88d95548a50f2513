// The reproduction file, version 2 (docs/reproduction-format.md): a topology,
// a schedule of actions stamped with rounds, in the order they were taken,
// each with what it waited for, and expectations a replay is judged against.
// Version 1 files (actions at round starts only) still parse and replay.
// Pure data: parsed by ./parse.ts, checked by ./check.ts.
import type { LinkFault } from '../lab/contract';
import type { FindingKind } from '../lab/records';
import type { ControlIndexTable } from '../wire/control-msg-tables';

export const REPRO_FORMAT = 'relay-lab-repro';
export const REPRO_VERSION = 2;
/** Versions this build reads: 1 (every action at its round's start) and 2 (actions gated, ./types.ts ActionGates). */
export const REPRO_VERSIONS = [1, 2] as const;
export type ReproVersion = (typeof REPRO_VERSIONS)[number];

export interface ReproTopology {
  /** Ranks per host, host by host ([2, 2] = 2 hosts x 2 ranks; [4, 2, 1] uneven). */
  ranksPerHost: number[];
  mode: 'fold' | 'forward' | 'direct';
  policy: 'elastic' | 'strict';
  dtype: 'f32' | 'bf16';
  modelBytes: number;
  seed: number;
  /** 32 hex characters; absent = a fresh salt per replay (the consensus bytes do not depend on it). */
  saltHex?: string;
  stalenessMs: number;
  /** Pause between rounds (0 = as fast as possible). */
  intervalMs: number;
  rounds: number;
  /** The control message index table (TopologyConfig.controlIndexTable); files without it are 'v2'. */
  controlIndexTable: ControlIndexTable;
  /** Hosts whose relay was a command (an external relay, e.g. a flodl build), and what it ran. */
  relays?: ReproRelay[];
}

/** An external relay as recorded: its command and the SHA-256 of its program file (resolved via PATH). */
export interface ReproRelay {
  host: number;
  command: string;
  /** 64 lowercase hex; null when the program could not be found when the file was written. */
  sha256: string | null;
}

/**
 * When, inside its round, an action is applied (version 2). A person acts at any moment of a
 * round, also while it is stalled; what decides the replay's consensus and dead set is not the
 * moment but what had happened by then, so that is what is kept. Without gates an action is
 * applied as its round starts (just after the round's SyncNow), as in version 1.
 */
export interface ActionGates {
  /**
   * 'consensus': the target's frame (a rank's, a host's ranks', the ranks' behind a link) is in
   * this round's consensus in the recorded session: the person acted after it was deposited. The
   * replay applies the action once the round's consensus is taken, so the frame is in it too.
   * 'adoption': as 'consensus', and the target had also adopted the round's consensus: applied
   * once it has (a pause then stalls the next round, as it did; a corrupted consensus is the next).
   * 'check': as 'adoption', taken once the round was over for every rank and the target had sent
   * its check of the adoption (a rank checks once told the round is over): applied once it has.
   * Gated on the adoption alone, a pause taken between rounds held the round's verdict its 2 s
   * for a check the paused rank could not send.
   * Absent: applied as the round starts, before the target can deposit.
   */
  after?: 'consensus' | 'adoption' | 'check';
  /** resume-rank and clear-link-fault: its targets were dead when it was taken; the replay waits for those deaths. */
  afterDead?: number[];
  /**
   * resume-rank and clear-link-fault: ms the person waited after the previous action on the same
   * target in this round (else after the round's start). A replay waits as long, but never so
   * long that a paused rank the recording kept alive could be declared dead meanwhile.
   */
  afterMs?: number;
  /** Informative: ms since the round's start when the action was taken (absent: before it started). */
  atMs?: number;
}

export type ReproAction = ActionGates &
  (
    | { round: number; action: 'kill-rank'; rank: number }
    | { round: number; action: 'pause-rank'; rank: number }
    /** SIGCONT of a paused rank; one declared dead while paused stays out of the reduce. */
    | { round: number; action: 'resume-rank'; rank: number }
    | { round: number; action: 'kill-host'; host: number }
    | { round: number; action: 'link-fault'; link: string; fault: LinkFault }
    | { round: number; action: 'clear-link-fault'; link: string }
  );

export interface FindingPattern {
  kind?: FindingKind;
  /** Substring the finding's message must contain. */
  message?: string;
  severity?: 'error' | 'warn' | 'info';
}

export interface RoundExpectation {
  round: number;
  verdict?: 'ok' | 'mismatch' | 'unchecked';
  consensusSha256?: string;
  /**
   * Enforced on replay (ClusterConfig.mergeOrders), not judged: the merge order the saved run summed in. A fold of 3+ terms
   * (3+ ranks on a host, 3+ hosts) sums in arrival order, as flodl does, and f32 addition is
   * not associative: a different order gives other consensus bytes. A failed consensusSha256
   * names both orders so the cause can be told apart from different arithmetic.
   */
  mergeOrder?: number[][];
}

export interface LinkBytesExpectation {
  link: string;
  /** up: toward the controller, down: away from it, total: both. */
  dir: 'up' | 'down' | 'total';
  min?: number;
  max?: number;
}

export interface ReproExpectations {
  verdict?: 'ok' | 'mismatch' | 'incomplete' | 'error';
  roundsCompleted?: number;
  rounds?: RoundExpectation[];
  /** The dead ranks at the end, ascending. */
  dead?: number[];
  findings?: { present?: FindingPattern[]; absent?: FindingPattern[] };
  linkBytes?: LinkBytesExpectation[];
}

export interface Repro {
  format: typeof REPRO_FORMAT;
  /** The version the file was written in (a version 1 file keeps its round-start semantics). */
  version: ReproVersion;
  name?: string;
  description?: string;
  /**
   * The round the live session was on when Record was pressed (written by the window). A replay
   * still runs from round 0: the cluster numbers its rounds from 0, and round N's dead set and
   * consensus are what rounds 0..N-1 and the actions before Record left behind.
   */
  recordedFrom?: number;
  topology: ReproTopology;
  /** Ends a replay that cannot finish (a parked barrier). */
  timeoutMs?: number;
  schedule: ReproAction[];
  expectations: ReproExpectations;
}

/** The link ids a topology has (as the tap names them), to reject a typo before anything starts. */
export function reproLinkIds(ranksPerHost: number[], mode: ReproTopology['mode']): string[] {
  const ids: string[] = [];
  let rank = 0;
  ranksPerHost.forEach((k, h) => {
    if (mode !== 'direct') ids.push(`h${h}.uplink.data`, `h${h}.uplink.control`);
    for (let i = 0; i < k; i++, rank++) {
      if (mode === 'direct') ids.push(`r${rank}.uplink.data`, `r${rank}.uplink.control`);
      else ids.push(`h${h}.r${rank}.data`, `h${h}.r${rank}.control`);
    }
  });
  return ids;
}
