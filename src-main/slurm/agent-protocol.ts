// The link between a Slurm job's engine (task 0: controller, coordinator, the
// round driver) and the host agent of every other task (its relay and its
// ranks, on its own node). Newline-delimited JSON over one TCP connection,
// opened by the agent and authenticated both ways with the session salt the
// job keeps in a file only its user can read (HMAC-SHA256 over a nonce each
// side chose), so nothing on the network can drive a rank without it.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { RelayEvent } from '../engine/relay-options';
import type { UnitRecord } from '@shared/lab/records';

/** A line longer than this is a broken or hostile peer, never a message (a rank's stderr line is cut first). */
export const MAX_LINE_BYTES = 1 << 20;

export type AgentToEngine =
  | { type: 'hello'; host: number; node: string; nonce: string; mac: string }
  | { type: 'relayStarted'; data: number; control: number }
  | { type: 'relayFailed'; message: string }
  | { type: 'rankMessage'; rank: number; msg: unknown }
  | { type: 'rankStderr'; rank: number; line: string }
  | { type: 'rankError'; rank: number; message: string }
  | { type: 'rankExit'; rank: number; code: number | null; signal: NodeJS.Signals | null }
  | { type: 'relayEvent'; event: RelayEvent }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string }
  // The relay's loopback legs as its own tap recorded them (leg-forwarder.ts, leg-recorder.ts).
  /** A leg seen for the first time: its id (h1.r2.data) and its socket's ends on the agent's node. */
  | { type: 'legLink'; id: string; endpoints?: { address: string; clientPort: number; serverPort: number } }
  /** now: the agent tap's clock when sent; size: what the engine acknowledges (legAck) for the bound. */
  | { type: 'legUnits'; now: number; size: number; units: LegUnit[] }
  /** Units the agent did not send because the link to the engine fell behind (never a wire failure). */
  | { type: 'legGap'; gap: LegGap }
  /** Each leg's byte counters (totals), for the links that changed. */
  | { type: 'legBytes'; links: [id: string, up: number, down: number][] };

/** One unit of a leg: the agent tap's record and the bytes it kept (base64). */
export interface LegUnit {
  r: UnitRecord;
  b: string;
}

export interface LegGap {
  link: string;
  dir: 'up' | 'down';
  /** The agent tap's time of the first unit not kept. */
  t: number;
  units: number;
  /** Their lengths on the wire. */
  bytes: number;
  /** How many of them the relay itself rejected (their findings come as relay events). */
  rejected: number;
}

/** What the engine may ask of a host agent; nothing else is accepted. */
export interface RemoteRelayOptions {
  hostName: string;
  ranks: number[];
  worldSize: number;
  mode: 'fold' | 'forward';
  controllerAddress: string;
  controllerPort: number;
  dataVersion: number;
  controlVersion: number;
  ceiling: number;
  starvationMs?: number;
  historical?: { nagle?: boolean; unboundedQueue?: boolean; staleBuild?: boolean };
  /** Record the relay's loopback legs and send them (absent: not wanted). */
  legs?: LegOptions;
}

export interface LegOptions {
  /** Bytes kept per unit (the engine tap's snap length, capped at LEG_SNAP_MAX). */
  snapLen: number;
  /** Leg bytes sent and not yet acknowledged past which units are dropped (a named gap). */
  queueBytes: number;
}

/** A leg unit keeps at most this many bytes: one unit must fit one line of the link (MAX_LINE_BYTES) as base64. */
export const LEG_SNAP_MAX = 512 * 1024;
/** The default bound on leg bytes in flight to the engine. */
export const LEG_QUEUE_BYTES = 4 * 1024 * 1024;

export type EngineToAgent =
  | { type: 'welcome'; mac: string }
  | { type: 'startRelay'; options: RemoteRelayOptions }
  /** spec: the rank's RankSpec as JSON, exactly as a local rank gets it in RELAY_LAB_RANK_SPEC. */
  | { type: 'spawnRank'; rank: number; spec: string }
  | { type: 'signal'; rank: number; signal: 'SIGSTOP' | 'SIGCONT' | 'SIGKILL' | 'SIGTERM' }
  | { type: 'send'; rank: number; msg: unknown }
  | { type: 'killHost' }
  | { type: 'shutdown' }
  /** Leg bytes received so far (the sum of legUnits sizes): what is no longer in flight. */
  | { type: 'legAck'; bytes: number };

export function nonce(): string {
  return randomBytes(16).toString('hex');
}

function tag(salt: Uint8Array, role: 'agent' | 'engine', host: number, n: string): Buffer {
  return createHmac('sha256', salt).update(`relay-lab slurm ${role} h${host} ${n}`).digest();
}

export function agentMac(salt: Uint8Array, host: number, engineNonce: string): string {
  return tag(salt, 'agent', host, engineNonce).toString('hex');
}

export function engineMac(salt: Uint8Array, host: number, agentNonce: string): string {
  return tag(salt, 'engine', host, agentNonce).toString('hex');
}

/** Constant-time comparison of a MAC received as hex with the expected one. */
export function macMatches(expectedHex: string, receivedHex: unknown): boolean {
  if (typeof receivedHex !== 'string' || !/^[0-9a-f]{64}$/.test(receivedHex)) return false;
  return timingSafeEqual(Buffer.from(expectedHex, 'hex'), Buffer.from(receivedHex, 'hex'));
}

export class AgentProtocolError extends Error {
  override readonly name = 'AgentProtocolError';
  constructor(
    readonly code: 'LINE_TOO_LONG' | 'BAD_JSON' | 'BAD_MESSAGE' | 'AUTH_FAILED',
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

/** Splits a byte stream into JSON messages, one a line; a line past MAX_LINE_BYTES is an error, not a buffer. */
export function jsonLines(onMessage: (m: unknown) => void, onError: (e: AgentProtocolError) => void) {
  let parts: Buffer[] = [];
  let size = 0;
  let failed = false;
  return (chunk: Buffer) => {
    if (failed) return;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl < 0 ? chunk.length : nl;
      size += end - start;
      if (size > MAX_LINE_BYTES) {
        failed = true;
        onError(new AgentProtocolError('LINE_TOO_LONG', `a line passed ${MAX_LINE_BYTES} bytes`));
        return;
      }
      parts.push(chunk.subarray(start, end));
      if (nl < 0) return;
      const line = Buffer.concat(parts).toString('utf8');
      parts = [];
      size = 0;
      start = nl + 1;
      if (line.trim() === '') continue;
      let m: unknown;
      try {
        m = JSON.parse(line);
      } catch {
        failed = true;
        onError(new AgentProtocolError('BAD_JSON', 'a line that is not JSON'));
        return;
      }
      if (typeof m !== 'object' || m === null || typeof (m as { type?: unknown }).type !== 'string') {
        failed = true;
        onError(new AgentProtocolError('BAD_MESSAGE', 'a message without a type'));
        return;
      }
      onMessage(m);
    }
  };
}

export function line(m: AgentToEngine | EngineToAgent): string {
  return JSON.stringify(m) + '\n';
}
