// What a rank process is told to do. The lab hands it over in the
// RELAY_LAB_RANK_SPEC environment variable (JSON); `relay-lab rank` builds it
// from flags.
import { isControlIndexTable, type ControlIndexTable } from '@shared/wire/control-msg-tables';

export interface RankSpec {
  rank: number;
  worldSize: number;
  saltHex: string;
  /** Where the rank dials: its relay's loopback listeners, or the controller in direct mode. */
  address: string;
  dataPort: number;
  controlPort: number;
  /** Lab-only direct mode: dial the controller itself, channel magic first (no relay). */
  direct: boolean;
  dataVersion: number;
  controlVersion: number;
  /** The ControlMsgWire / TimingMsgWire indices the session speaks; absent = v2. */
  controlIndexTable?: ControlIndexTable;
  modelBytes: number;
  shapes?: number[][];
  dtype: 'f32' | 'bf16';
  seed: number;
  /** Rounds to run; 0 = until the coordinator says Shutdown. */
  rounds: number;
  /** An idle rank ships mass 0 with elided tensors every round. */
  idle: boolean;
  /** Lab pacing: wait for a SyncNow from the coordinator before each round. */
  paced: boolean;
  heartbeatMs: number;
  /** Where round results go: the parent over IPC, a JSON report on stdout, or nowhere. */
  report: 'ipc' | 'json' | 'none';
  /** Most consensus elements reported per round for the checker. */
  sampleMax: number;
  /** Lab-only historical behaviours (WIRE.md 6): Nagle on; an idle rank shipping full tensors instead of elided ones, holding NaN. */
  nagle?: boolean;
  noElision?: boolean;
  idleNaN?: boolean;
}

export const RANK_SPEC_ENV = 'RELAY_LAB_RANK_SPEC';
/** The pid of the process that spawned the rank (the rank leaves if its parent is already someone else). */
export const RANK_PARENT_ENV = 'RELAY_LAB_RANK_PARENT';

/** Messages a lab rank sends its parent over the IPC channel (never on the wire). */
export type RankToParent =
  | { type: 'ready'; rank: number; pid: number }
  /** The rank has the round's consensus, verified (MAC, schema) and adopted: what ends the round. */
  | { type: 'adopted'; rank: number; round: number; weight: number; ms: number }
  /**
   * What only the lab's verdict needs, sent once the round is over for every rank (a lab rank
   * waits for roundEnd, as for its next gradient): made before `adopted`, the digest and the
   * samples kept each rank's round open longer and took a core from the ranks still adopting.
   */
  | {
      type: 'checked';
      rank: number;
      round: number;
      /** The sampled elements (at sampleIndices(numel, sampleMax); none when weight is 0), rank/samples.ts. */
      samples: string;
      /** SHA-256 (hex) of the consensus frame's bytes without its footer: every element, for the bit-for-bit verdict. */
      digest: string;
      /** Sampled consensus elements that are NaN or infinite. */ nonFinite?: number;
    }
  /** The synthetic gradient of `round` is made: the rank is ready for that round's SyncNow (rank-readiness.ts). */
  | { type: 'prepared'; rank: number; round: number }
  | { type: 'error'; rank: number; message: string }
  | { type: 'done'; rank: number; roundsCompleted: number };

/**
 * Messages the parent sends a lab rank over the IPC channel (never on the wire):
 * `roundEnd` says every surviving rank has adopted `round`, so the rank may
 * now make its next gradient without taking a core from a rank still adopting.
 */
export type ParentToRank = { type: 'roundEnd'; round: number };

/** A parent message a rank understands (anything else is ignored). */
export function isParentToRank(m: unknown): m is ParentToRank {
  const x = m as { type?: unknown; round?: unknown } | null;
  return typeof x === 'object' && x !== null && x.type === 'roundEnd' && Number.isInteger(x.round);
}

export function parseRankSpec(json: string): RankSpec {
  const s = JSON.parse(json) as RankSpec;
  for (const k of ['rank', 'worldSize', 'dataPort', 'controlPort', 'modelBytes', 'seed', 'rounds'] as const) {
    if (!Number.isInteger(s[k]) || s[k] < 0) throw new Error(`rank spec: ${k} must be a whole number`);
  }
  if (s.controlIndexTable !== undefined && !isControlIndexTable(s.controlIndexTable))
    throw new Error(
      `rank spec: controlIndexTable must be v2 or v2-late, got ${JSON.stringify(s.controlIndexTable)}`,
    );
  if (s.worldSize < 1) throw new Error('rank spec: worldSize must be at least 1');
  if (s.rank >= s.worldSize) throw new Error(`rank_id ${s.rank} must be < world_size ${s.worldSize}`);
  return s;
}
