// Flag helpers shared by the standalone roles (controller, relay, rank).
import { parseSessionSalt, SaltError, type SessionSalt } from '@shared/lab/session-salt';
import { UsageError, choiceFlag, numberFlag } from '../args';
import {
  CONTROL_INDEX_TABLES,
  DEFAULT_CONTROL_INDEX_TABLE,
  type ControlIndexTable,
} from '@shared/wire/control-msg-tables';

/** The world a standalone role accepts (NUMBER_RANGES.worldSize: past it the per-rank tables would not fit in memory). */
export function worldSizeFlag(value: string | undefined): number {
  return numberFlag(value, 'world-size', 'worldSize', 1);
}

export function modelBytesFlag(value: string | undefined): number {
  return numberFlag(value, 'model-bytes', 'modelBytes', 4 * 1024 * 1024);
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
  return numberFlag(value, name, 'port', fallback);
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
