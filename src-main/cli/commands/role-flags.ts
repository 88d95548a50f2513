// Flag helpers shared by the standalone roles (controller, relay, rank).
import { parseSessionSalt, SaltError, type SessionSalt } from '@shared/lab/session-salt';
import { TOPOLOGY_LIMITS } from '@shared/lab/topology-config';
import { UsageError, choiceFlag, intFlag, sizeFlag } from '../args';
import {
  CONTROL_INDEX_TABLES,
  DEFAULT_CONTROL_INDEX_TABLE,
  type ControlIndexTable,
} from '@shared/wire/control-msg-tables';

/** The largest world a standalone role accepts: past it the per-rank tables would not fit in memory. */
export const MAX_WORLD_SIZE = 65536;
/** The engine's model size limit: the lab's topology limit (src-shared/lab/topology-config.ts). */
export const MAX_MODEL_BYTES = TOPOLOGY_LIMITS.maxModelBytes;

export function worldSizeFlag(value: string | undefined, min = 1): number {
  const n = intFlag(value, 'world-size', 1, min);
  if (n > MAX_WORLD_SIZE) throw new UsageError(`--world-size must be at most ${MAX_WORLD_SIZE}, got ${n}`);
  return n;
}

export function modelBytesFlag(value: string | undefined): number {
  const n = sizeFlag(value, 'model-bytes', 4 * 1024 * 1024);
  if (n < 4 || n > MAX_MODEL_BYTES) throw new UsageError(`--model-bytes must be 4 B .. 512 MiB, got ${n}`);
  return n;
}

/** --salt HEX, parsed once here into the lab's one salt type (bytes for the MAC, lowercase hex for specs). */
export function sessionSaltFlag(value: string | undefined): SessionSalt {
  if (value === undefined)
    throw new UsageError('--salt HEX is required (32 hex characters, the same on every role)');
  try {
    return parseSessionSalt(value, '--salt');
  } catch (e) {
    if (e instanceof SaltError) throw new UsageError(e.message);
    throw e;
  }
}

export function portFlag(value: string | undefined, name: string, fallback: number): number {
  const p = intFlag(value, name, fallback, 0);
  if (p > 65535) throw new UsageError(`--${name} must be a TCP port (0..65535), got ${p}`);
  return p;
}

export function ranksFlag(value: string | undefined, worldSize: number): number[] {
  if (value === undefined) throw new UsageError('--ranks 0,1,2,3 is required');
  if (!/^\d+(,\d+)*$/.test(value))
    throw new UsageError(`--ranks must be a comma-separated list of ranks, got '${value}'`);
  const ranks = value.split(',').map(Number);
  const bad = ranks.find((r) => r >= worldSize);
  if (bad !== undefined) throw new UsageError(`rank ${bad} must be < --world-size ${worldSize}`);
  if (new Set(ranks).size !== ranks.length) throw new UsageError('--ranks lists a rank twice');
  return ranks;
}

/** ADDR:PORT (IPv6 in brackets). */
export function hostPortFlag(
  value: string | undefined,
  name: string,
  fallback: string,
): { host: string; port: number } {
  const v = value ?? fallback;
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(v);
  if (!m) throw new UsageError(`--${name} must be ADDR:PORT, got '${v}'`);
  return { host: m[1] ?? m[2], port: portFlag(m[3], name, 0) };
}

/** The usage text of --index-table, the same for every command that takes it. */
export const INDEX_TABLE_USAGE = `--index-table ${CONTROL_INDEX_TABLES.join('|')} (${DEFAULT_CONTROL_INDEX_TABLE})`;

/**
 * --index-table: the ControlMsgWire / TimingMsgWire variant indices the session speaks
 * (WIRE.md 3.5; TopologyConfig.controlIndexTable). Every end of a control channel must agree.
 */
export function indexTableFlag(value: string | undefined): ControlIndexTable {
  return choiceFlag(value, 'index-table', CONTROL_INDEX_TABLES, DEFAULT_CONTROL_INDEX_TABLE);
}
