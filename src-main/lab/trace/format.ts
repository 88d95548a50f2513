// The session trace's types: one header line, then one event per line
// (docs/trace-format.md). Everything here is plain JSON data.
import type { TopologyConfig } from '@shared/lab/topology';
import type { Channel, LinkView } from '@shared/lab/state';
import type { Finding, RoundReport, UnitRecord } from '@shared/lab/records';

export const TRACE_FORMAT = 'relay-lab-trace';
/** Bumped when a reader of the previous version could misread a trace. */
export const TRACE_VERSION = 1;

/**
 * One link as a TCP connection, for pcapng export. The client is the side
 * that dialed (a rank toward its relay, a relay toward the controller, a rank
 * toward the controller in direct mode); the lab's `up` direction is always
 * client -> server.
 */
export interface TraceLink {
  id: string;
  channel: Channel;
  kind: 'loopback' | 'uplink';
  /** Display names of the two ends, as in LinkView (`from` is the client). */
  from: string;
  to: string;
  host: number;
  rank?: number;
  clientAddr: string;
  clientPort: number;
  serverAddr: string;
  serverPort: number;
  /** True when the ports were made up (no engine supplied real ones). */
  syntheticEndpoints?: boolean;
}

export interface TraceHeader {
  format: typeof TRACE_FORMAT;
  version: number;
  /** Wall clock of the session start, epoch milliseconds; event `t` is relative to it. */
  startedAt: number;
  /** 32 lowercase hex chars: the session salt, so a trace can be re-verified offline. */
  saltHex: string;
  config: TopologyConfig;
  links: TraceLink[];
  /** What wrote the trace, e.g. "relay-lab 0.1.0". */
  producer?: string;
  /** The tap's per-unit byte cap when the trace was written. */
  snapLen?: number;
}

/** Kill, pause, fault and the other things a person or a scenario did. */
export type LifecycleAction =
  | 'start'
  | 'stop'
  | 'killRank'
  | 'pauseRank'
  | 'resumeRank'
  | 'killHost'
  | 'pauseRounds'
  | 'resumeRounds'
  | 'faultApplied'
  | 'faultCleared'
  /** A link's TCP connection ended: with `reset` a RST, otherwise a FIN from `by`. */
  | 'linkClosed';

export interface LifecycleEvent {
  type: 'lifecycle';
  t: number;
  action: LifecycleAction;
  rank?: number;
  host?: number;
  link?: string;
  /** The direction a fault applies to; absent = both. */
  dir?: 'up' | 'down';
  /** The fault's own description (its kind and knobs), as the engine names them. */
  fault?: { kind: string } & Record<string, unknown>;
  /** linkClosed: which side closed first. */
  by?: 'client' | 'server';
  reset?: boolean;
  message?: string;
}

export interface RecordEvent {
  type: 'record';
  t: number;
  record: UnitRecord;
  /** The captured bytes (record.captured of them), base64. */
  bytes: Uint8Array;
}

export interface RoundEvent {
  type: 'round';
  t: number;
  report: RoundReport;
}

export interface FindingEvent {
  type: 'finding';
  t: number;
  finding: Finding;
}

/** A link that appeared after the header was written (a reconnect, a late leg). */
export interface LinkEvent {
  type: 'link';
  t: number;
  link: TraceLink;
}

/** The links' byte and unit counters at time t. */
export interface LinksEvent {
  type: 'links';
  t: number;
  links: LinkView[];
}

export interface LogEvent {
  type: 'log';
  t: number;
  level: 'info' | 'warn' | 'error';
  message: string;
}

/** The last line of a trace that was closed cleanly. */
export interface EndEvent {
  type: 'end';
  t: number;
  records: number;
  events: number;
}

export type TraceEvent =
  RecordEvent | RoundEvent | FindingEvent | LifecycleEvent | LinkEvent | LinksEvent | LogEvent | EndEvent;
export type TraceEventType = TraceEvent['type'];
