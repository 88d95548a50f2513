// The session's observable state, as the window and `run --json` see it.
import type { TopologyConfig } from './topology';
import type { LinkFault } from './contract';

/** 'exited': the process ended without being declared dead (a clean stop ends every live rank so); 'dead': killed or declared dead. */
export type RankState = 'starting' | 'alive' | 'paused' | 'dead' | 'exited';
/** 'stopped': the session was stopped and closed the relay (not a failure; 'dead' is a killed host or one whose ranks all died). */
export type HostState = 'up' | 'dead' | 'stopped';
export type Channel = 'data' | 'control';
export type Direction = 'up' | 'down';

export interface RankView {
  rank: number;
  host: number;
  state: RankState;
  /**
   * The process is held by SIGSTOP (Pause rank) and not resumed: with state
   * 'paused' it is simply paused; with 'dead' the coordinator declared it dead
   * while it was paused (heartbeat staleness). Resume (SIGCONT) stays possible.
   */
  stopped?: boolean;
  /** A rank resumed after it was declared dead: it runs, out of the reduce (its relay drops its frames). */
  resumedAfterDeath?: boolean;
  pid?: number;
  roundsCompleted: number;
}

export interface HostView {
  host: number;
  /** h0, h1, ... */
  name: string;
  ranks: number[];
  state: HostState;
}

/**
 * One TCP connection (or, for the uplink, one per channel). Ids are stable
 * strings: `h0.uplink.data`, `h0.uplink.control`, `h0.r3.data`, `h0.r3.control`
 * (rank-relay loopback legs), and in `direct` mode `r3.uplink.data`.
 */
export interface LinkView {
  id: string;
  from: string;
  to: string;
  channel: Channel;
  /** loopback = rank<->relay on a host; uplink = host (or rank in direct mode) <-> controller. */
  kind: 'loopback' | 'uplink';
  host: number;
  rank?: number;
  /** The TCP endpoints of the connection, when known (loopback addresses; the client is the dialer). */
  endpoints?: { address: string; clientPort: number; serverPort: number };
  /** Every byte on the socket, toward the controller. */
  bytesUp: number;
  /** Every byte on the socket, away from the controller. */
  bytesDown: number;
  units: number;
  /** The fault holding on this link now (one-shot faults never hold); the engine's, so a new topology starts with none. */
  fault?: LinkFault;
}

export interface SessionSnapshot {
  running: boolean;
  config: TopologyConfig;
  saltHex: string;
  hosts: HostView[];
  ranks: RankView[];
  links: LinkView[];
  /** The round the cluster is working on. */
  round: number;
  roundsCompleted: number;
  roundsPaused: boolean;
  startedAt: number;
}
