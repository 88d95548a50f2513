// Validation of LabCommand values that arrive from an untrusted side (Electron
// IPC from the renderer, browser mode's WebSocket). Anything malformed becomes
// a LabCommandError with a message naming the offending field; a valid value
// is rebuilt field by field, so nothing unexpected (extra keys, prototypes)
// reaches the session.
import type { LabCommand, LinkFault, TraceCommand } from './contract';
import type { TopologyConfig, UplinkMode, LossPolicy, WireDtype } from './topology';
import { SWEEP_COMMAND_TYPES, type SweepCommand } from '../sweep/contract';
import { validateSweepCommand } from '../sweep/validate-command';

export const BAD_COMMAND = 'BAD_COMMAND';

export class LabCommandError extends Error {
  override readonly name = 'LabCommandError';
  readonly code = BAD_COMMAND;
}

/** Limits that keep a hostile or mistaken command from exhausting the machine. */
export const COMMAND_LIMITS = {
  maxHosts: 16,
  maxRanksPerHost: 32,
  /** Rank OS processes in one topology (the session's own limit too). */
  maxTotalRanks: 64,
  /** The session's limit too: every rank holds a model this big. */
  maxModelBytes: 512 * 1024 * 1024,
  maxIntervalMs: 60_000,
  maxStalenessMs: 600_000,
  maxCompareRounds: 1000,
  maxRank: 1 << 16,
  maxFaultMs: 600_000,
  maxLinkId: 64,
} as const;

type Plain = Record<string, unknown>;

function fail(message: string): never {
  throw new LabCommandError(message);
}

function isPlainObject(v: unknown): v is Plain {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function onlyKeys(obj: Plain, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) fail(`${where}: unknown field '${key}'`);
  }
}

function int(v: unknown, where: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) fail(`${where} must be an integer`);
  if (v < min || v > max) fail(`${where} must be between ${min} and ${max}`);
  return v;
}

function oneOf<T extends string>(v: unknown, where: string, values: readonly T[]): T {
  if (typeof v !== 'string' || !values.includes(v as T)) fail(`${where} must be one of ${values.join(', ')}`);
  return v as T;
}

const CONFIG_KEYS = [
  'ranksPerHost',
  'modelBytes',
  'dtype',
  'mode',
  'policy',
  'saltHex',
  'seed',
  'rounds',
  'roundIntervalMs',
  'stalenessMs',
  'controlVersion',
  'dataVersion',
] as const;

export function validateTopologyConfig(v: unknown, where = 'config'): Partial<TopologyConfig> {
  if (!isPlainObject(v)) fail(`${where} must be an object`);
  onlyKeys(v, CONFIG_KEYS, where);
  const out: Partial<TopologyConfig> = {};
  if (v.ranksPerHost !== undefined) {
    const rph = v.ranksPerHost;
    if (!Array.isArray(rph) || rph.length < 1 || rph.length > COMMAND_LIMITS.maxHosts) {
      fail(`${where}.ranksPerHost must be an array of 1 to ${COMMAND_LIMITS.maxHosts} hosts`);
    }
    out.ranksPerHost = rph.map((k, i) =>
      int(k, `${where}.ranksPerHost[${i}]`, 1, COMMAND_LIMITS.maxRanksPerHost),
    );
    if (out.ranksPerHost.reduce((a, b) => a + b, 0) > COMMAND_LIMITS.maxTotalRanks)
      fail(`${where}.ranksPerHost may hold at most ${COMMAND_LIMITS.maxTotalRanks} ranks in all`);
  }
  if (v.modelBytes !== undefined) {
    out.modelBytes = int(v.modelBytes, `${where}.modelBytes`, 4, COMMAND_LIMITS.maxModelBytes);
    if (out.modelBytes % 4 !== 0) fail(`${where}.modelBytes must be a multiple of 4 (f32 elements)`);
  }
  if (v.dtype !== undefined) out.dtype = oneOf<WireDtype>(v.dtype, `${where}.dtype`, ['f32', 'bf16']);
  if (v.mode !== undefined)
    out.mode = oneOf<UplinkMode>(v.mode, `${where}.mode`, ['fold', 'forward', 'direct']);
  if (v.policy !== undefined)
    out.policy = oneOf<LossPolicy>(v.policy, `${where}.policy`, ['elastic', 'strict']);
  if (v.saltHex !== undefined) {
    if (typeof v.saltHex !== 'string' || !/^[0-9a-f]{32}$/.test(v.saltHex))
      fail(`${where}.saltHex must be 32 lowercase hex chars`);
    out.saltHex = v.saltHex;
  }
  if (v.seed !== undefined) out.seed = int(v.seed, `${where}.seed`, 0, 0xffffffff);
  if (v.rounds !== undefined) out.rounds = int(v.rounds, `${where}.rounds`, 0, Number.MAX_SAFE_INTEGER);
  if (v.roundIntervalMs !== undefined)
    out.roundIntervalMs = int(v.roundIntervalMs, `${where}.roundIntervalMs`, 0, COMMAND_LIMITS.maxIntervalMs);
  if (v.stalenessMs !== undefined)
    out.stalenessMs = int(v.stalenessMs, `${where}.stalenessMs`, 1, COMMAND_LIMITS.maxStalenessMs);
  if (v.controlVersion !== undefined)
    out.controlVersion = int(v.controlVersion, `${where}.controlVersion`, 1, 255);
  if (v.dataVersion !== undefined) out.dataVersion = int(v.dataVersion, `${where}.dataVersion`, 1, 255);
  return out;
}

const FAULT_KEYS = [
  'dir',
  'latencyMs',
  'jitterMs',
  'bandwidth',
  'sliceBytes',
  'sliceGapMs',
  'stallMs',
  'corruptNext',
  'reset',
  'blackhole',
] as const;

function bool(v: unknown, where: string): boolean {
  if (typeof v !== 'boolean') fail(`${where} must be true or false`);
  return v;
}

export function validateLinkFault(v: unknown, where = 'fault'): LinkFault {
  if (!isPlainObject(v)) fail(`${where} must be an object or null`);
  onlyKeys(v, FAULT_KEYS, where);
  const fault: LinkFault = { dir: oneOf(v.dir, `${where}.dir`, ['up', 'down', 'both'] as const) };
  const ms = COMMAND_LIMITS.maxFaultMs;
  if (v.latencyMs !== undefined) fault.latencyMs = int(v.latencyMs, `${where}.latencyMs`, 0, ms);
  if (v.jitterMs !== undefined) fault.jitterMs = int(v.jitterMs, `${where}.jitterMs`, 0, ms);
  if (v.bandwidth !== undefined)
    fault.bandwidth = int(v.bandwidth, `${where}.bandwidth`, 1, Number.MAX_SAFE_INTEGER);
  if (v.sliceBytes !== undefined)
    fault.sliceBytes = int(v.sliceBytes, `${where}.sliceBytes`, 1, COMMAND_LIMITS.maxModelBytes);
  if (v.sliceGapMs !== undefined) fault.sliceGapMs = int(v.sliceGapMs, `${where}.sliceGapMs`, 0, ms);
  if (v.stallMs !== undefined) fault.stallMs = int(v.stallMs, `${where}.stallMs`, 0, ms);
  if (v.corruptNext !== undefined) fault.corruptNext = bool(v.corruptNext, `${where}.corruptNext`);
  if (v.reset !== undefined) fault.reset = bool(v.reset, `${where}.reset`);
  if (v.blackhole !== undefined) fault.blackhole = bool(v.blackhole, `${where}.blackhole`);
  return fault;
}

const COMMAND_TYPES = [
  'start',
  'stop',
  'killRank',
  'pauseRank',
  'resumeRank',
  'killHost',
  'pauseRounds',
  'resumeRounds',
  'stepRound',
  'setSpeed',
  'compareModes',
  'getRecordBytes',
  'setLinkFault',
  'snapshot',
  'listScenarios',
  'runScenario',
  'saveTrace',
  'listTraces',
  'openTrace',
  'seekTrace',
  'closeTrace',
  'recentRecords',
  ...SWEEP_COMMAND_TYPES,
] as const;

/** A trace file name inside the traces folder: no folders, no dot files. */
export const TRACE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}\.ndjson$/;
/** At most this many records in one recentRecords reply. */
export const MAX_RECENT_RECORDS = 20_000;

/** Checks an untrusted value and returns a fresh, well-formed LabCommand, or throws LabCommandError. */
export function validateLabCommand(v: unknown): LabCommand | TraceCommand | SweepCommand {
  if (!isPlainObject(v)) fail('command must be an object');
  const type = oneOf(v.type, 'command.type', COMMAND_TYPES);
  switch (type) {
    case 'start':
      onlyKeys(v, ['type', 'config'], type);
      return v.config === undefined ? { type } : { type, config: validateTopologyConfig(v.config) };
    case 'stop':
    case 'pauseRounds':
    case 'resumeRounds':
    case 'stepRound':
    case 'snapshot':
    case 'listScenarios':
    case 'listTraces':
    case 'closeTrace':
      onlyKeys(v, ['type'], type);
      return { type };
    case 'runScenario':
      onlyKeys(v, ['type', 'name'], type);
      if (typeof v.name !== 'string' || !/^[a-z0-9][a-z0-9-]{0,63}$/.test(v.name))
        fail('runScenario.name must be a scenario name such as mid-frame-desync');
      return { type, name: v.name };
    case 'killRank':
    case 'pauseRank':
    case 'resumeRank':
      onlyKeys(v, ['type', 'rank'], type);
      return { type, rank: int(v.rank, `${type}.rank`, 0, COMMAND_LIMITS.maxRank) };
    case 'killHost':
      onlyKeys(v, ['type', 'host'], type);
      return { type, host: int(v.host, 'killHost.host', 0, COMMAND_LIMITS.maxHosts - 1) };
    case 'setSpeed':
      onlyKeys(v, ['type', 'roundIntervalMs'], type);
      return {
        type,
        roundIntervalMs: int(v.roundIntervalMs, 'setSpeed.roundIntervalMs', 0, COMMAND_LIMITS.maxIntervalMs),
      };
    case 'compareModes': {
      onlyKeys(v, ['type', 'config', 'rounds'], type);
      const cmd: LabCommand = { type };
      if (v.config !== undefined) cmd.config = validateTopologyConfig(v.config);
      if (v.rounds !== undefined)
        cmd.rounds = int(v.rounds, 'compareModes.rounds', 1, COMMAND_LIMITS.maxCompareRounds);
      return cmd;
    }
    case 'setLinkFault': {
      onlyKeys(v, ['type', 'link', 'fault'], type);
      if (
        typeof v.link !== 'string' ||
        v.link.length < 1 ||
        v.link.length > COMMAND_LIMITS.maxLinkId ||
        !/^[A-Za-z0-9._-]+$/.test(v.link)
      ) {
        fail('setLinkFault.link must be a link id such as h0.uplink.data');
      }
      if (!('fault' in v)) fail('setLinkFault.fault must be a fault object or null');
      return {
        type,
        link: v.link,
        fault: v.fault === null ? null : validateLinkFault(v.fault, 'setLinkFault.fault'),
      };
    }
    case 'getRecordBytes':
      onlyKeys(v, ['type', 'seq'], type);
      return { type, seq: int(v.seq, 'getRecordBytes.seq', 0, Number.MAX_SAFE_INTEGER) };
    case 'saveTrace':
      onlyKeys(v, ['type', 'format'], type);
      return { type, format: oneOf(v.format, 'saveTrace.format', ['ndjson', 'pcapng'] as const) };
    case 'openTrace':
      onlyKeys(v, ['type', 'name'], type);
      if (v.name === undefined) return { type };
      if (typeof v.name !== 'string' || !TRACE_NAME.test(v.name))
        fail('openTrace.name must be a file name in the traces folder ending in .ndjson (no folders)');
      return { type, name: v.name };
    case 'seekTrace':
      onlyKeys(v, ['type', 't'], type);
      if (typeof v.t !== 'number' || !Number.isFinite(v.t) || v.t < 0)
        fail('seekTrace.t must be a finite number of milliseconds, 0 or more');
      return { type, t: v.t };
    case 'sweep':
    case 'cancelSweep':
    case 'saveSweep':
    case 'listSweeps':
    case 'openSweep':
      try {
        return validateSweepCommand(v);
      } catch (e) {
        return fail((e as Error).message);
      }
    case 'recentRecords':
      onlyKeys(v, ['type', 'limit'], type);
      return v.limit === undefined
        ? { type }
        : { type, limit: int(v.limit, 'recentRecords.limit', 1, MAX_RECENT_RECORDS) };
  }
}

/** The reply a transport sends for a command that failed validation. */
export function badCommandReply(e: unknown): { ok: false; error: string; message: string } {
  const message = e instanceof Error ? e.message : String(e);
  return { ok: false, error: BAD_COMMAND, message };
}
