// What the controller is configured with and reports, and the contract
// between it and the per-connection sources that feed it (kept apart so the
// sources do not import the controller).
import type { LossPolicy, UplinkMode } from '@shared/lab/topology';
import type { Mac } from '@shared/wire/mac';
import type { WireError } from '@shared/wire/errors';
import type { Conn } from './conn';
import type { DeadRanks } from './dead-ranks';
import type { CollectedFrame } from './frame-collector';
import type { Tap } from './tap';
import type { UplinkRecorder } from './uplink-recorder';

export interface ControllerOptions {
  worldSize: number;
  mac: Mac;
  mode: UplinkMode;
  policy: LossPolicy;
  ceiling: number;
  dataVersion: number;
  dead: DeadRanks;
  tap?: Tap;
  /** Host of a global rank (link names in direct mode). */
  hostOfRank?: (rank: number) => number;
  helloTimeoutMs?: number;
  pollMs?: number;
  /** Committed-read starvation deadline (WIRE.md 4.1; 60 s in flodl). */
  starvationMs?: number;
  /** Lab-only historical behaviours, for reproducing the transport's incidents (WIRE.md 6). */
  historical?: ControllerHistorical;
  /**
   * Lab-only, replays of a reproduction: round r's recorded merge order (groups
   * of ranks, one per contribution); the reduce sums the connections in that
   * order instead of connection-index order. Undefined = flodl's order.
   */
  mergeOrder?: (round: number) => readonly (readonly number[])[] | undefined;
}

export interface ControllerHistorical {
  /** No dead-diff forwarding: a wedged rank parks its host's fold forever (WIRE.md 6.6). */
  noDeclareDead?: boolean;
  /** A failed scatter write stops the whole reduce instead of declaring that host dead (WIRE.md 6.7). */
  failFastScatter?: boolean;
}

export type ControllerEvent =
  | { type: 'ready' }
  | {
      type: 'round';
      round: number;
      hosts: number[];
      ranks: number[] | null;
      /** Forward and direct modes: the ranks in the order reduce_realized_work summed their frames. */
      order: number[] | null;
      weight: number;
      ms: number;
      consensusBytes: number;
    }
  | { type: 'error'; message: string; code?: string; host?: number; rank?: number; recordSeq?: number }
  /** recordSeq: the DeclareDead record sent to the relay. */
  | { type: 'declareDead'; rank: number; host: number; recordSeq?: number }
  | { type: 'shutdown'; reason: string; error?: boolean };

/** One accepted connection that contributes to rounds: a relay (HostSource) or, lab-only, a rank (DirectSource). */
export interface ContributionSource {
  readonly conn: Conn;
  readonly recorder: UplinkRecorder;
  readonly host: number;
  readonly hostName: string;
  readonly ranks: readonly number[];
  readonly direct: boolean;
  /** Verified contributions for the current round: key -1 = the HostFrame (fold), else the rank. */
  readonly frames: Map<number, CollectedFrame>;
  /** The connection is still up. */
  open: boolean;
  checkStarvation(now: number, deadlineMs: number): WireError | null;
}

/** What a source tells the controller. */
export interface SourceOwner {
  readonly opts: ControllerOptions;
  /** The round being collected (for the tap). */
  readonly round: number;
  /** A contribution arrived: the round wait looks again. */
  contributed(): void;
  /** A RankExit for one of the source's ranks. */
  rankExited(src: ContributionSource, rank: number): void;
  /** A wire error on the source's connection (already recorded on the tap as `recordSeq`). */
  sourceFailed(src: ContributionSource, message: string, code: string, recordSeq?: number): void;
}
