// The reproduction file, version 1 (docs/reproduction-format.md): a topology,
// a schedule of actions stamped with rounds, and expectations a replay is
// judged against. Pure data: parsed by ./parse.ts, checked by ./check.ts.
import type { LinkFault } from '../lab/contract';
import type { FindingKind } from '../lab/records';
import type { ControlIndexTable } from '../wire/control-msg-tables';

export const REPRO_FORMAT = 'relay-lab-repro';
export const REPRO_VERSION = 1;

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

export type ReproAction =
  | { round: number; action: 'kill-rank'; rank: number }
  | { round: number; action: 'pause-rank'; rank: number }
  /** SIGCONT of a paused rank; one declared dead while paused stays out of the reduce. */
  | { round: number; action: 'resume-rank'; rank: number }
  | { round: number; action: 'kill-host'; host: number }
  | { round: number; action: 'link-fault'; link: string; fault: LinkFault }
  | { round: number; action: 'clear-link-fault'; link: string };

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
  version: typeof REPRO_VERSION;
  name?: string;
  description?: string;
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
