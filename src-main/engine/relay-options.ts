// What a relay is configured with and what it reports (shared by the relay
// and its channel roles, kept apart so the roles do not import the relay).
import type { Duplex } from 'node:stream';
import type { Mac } from '@shared/wire/mac';
import type { Tap } from './tap';

/** Where a channel's ranks connect from: a listening net.Server, or an in-memory stand-in in tests. */
export interface RankAcceptor {
  on(event: 'connection', listener: (socket: Duplex) => void): unknown;
  off(event: 'connection', listener: (socket: Duplex) => void): unknown;
  close(): unknown;
}

export type RelayMode = 'fold' | 'forward';

export interface RelayOptions {
  host: number;
  hostName: string;
  ranks: number[];
  worldSize: number;
  mac: Mac;
  mode: RelayMode;
  controllerAddress: string;
  controllerPort: number;
  /** 0 = any free port. */
  dataPort?: number;
  controlPort?: number;
  listenAddress?: string;
  dataVersion: number;
  controlVersion: number;
  ceiling: number;
  tap?: Tap;
  /** Committed-read starvation deadline on rank sockets (WIRE.md 4.1). */
  starvationMs?: number;
  connectAttempts?: number;
  connectIntervalMs?: number;
  /** How a channel reaches the controller (default: TCP to controllerAddress:controllerPort with retry). */
  dialUpstream?: (channel: ChannelName) => Promise<Duplex>;
  /** Lab-only historical behaviours, for reproducing the transport's incidents. */
  historical?: RelayHistorical;
  /**
   * Lab-only, replays of a reproduction: the merge order of this host's ranks in
   * round r (a recorded run's), enforced by the fold; undefined = commit order, as flodl.
   */
  mergeOrder?: (round: number) => readonly number[] | undefined;
}

/** Lab-only: behaviours flodl had before its fixes (WIRE.md 6), off by default. */
export interface RelayHistorical {
  /** Nagle left on (no TCP_NODELAY). */
  nagle?: boolean;
  /** An unbounded upstream queue instead of 64 records. */
  unboundedQueue?: boolean;
  /** A pre-fold relay build: every rank frame goes up as a per-rank Data record on the data channel. */
  staleBuild?: boolean;
}

export type ChannelName = 'data' | 'control';

export type RelayEvent =
  /** depositors ascending; order: the same ranks in the order the fold merged them (the verdict needs it). */
  | { type: 'folded'; round: number; depositors: number[]; order: number[]; bytes: number }
  | { type: 'forwarded'; round: number; rank: number; bytes: number }
  | { type: 'rankDead'; rank: number; cause: 'eof' | 'declared' | 'error' }
  | { type: 'dropped'; rank: number; reason: string; recordSeq?: number }
  | {
      type: 'error';
      channel: ChannelName;
      message: string;
      code?: string;
      rank?: number;
      recordSeq?: number;
    }
  | { type: 'up'; channel: ChannelName }
  | { type: 'shutdown'; channel: ChannelName; reason: string };
