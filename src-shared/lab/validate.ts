// Validation of LabCommand values that arrive from an untrusted side (Electron
// IPC from the renderer, browser mode's WebSocket). Anything malformed becomes
// a LabCommandError with a message naming the offending field; a valid value
// is rebuilt field by field, so nothing unexpected (extra keys, prototypes)
// reaches the session. One validator per command type, in a table the
// compiler checks against the contract's command specs.
import type { AnyCommand, CommandOf, CommandType, LinkFault } from './contract';
import {
  bool as boolOf,
  int as intOf,
  isPlainObject,
  oneOf as oneOfOf,
  onlyKeys as onlyKeysOf,
  type Fail,
  type Plain,
} from './field-checks';
import { parseTopologyConfig, TOPOLOGY_LIMITS, TopologyConfigError } from './topology-config';
import { NUMBER_RANGES, type NumberRange } from './number-ranges';
import { validateSweepCommand } from '../sweep/validate-command';
import { saltHexOf, TapSpecError, validateTapSpec } from './tap-spec';

export const BAD_COMMAND = 'BAD_COMMAND';

export class LabCommandError extends Error {
  override readonly name = 'LabCommandError';
  readonly code = BAD_COMMAND;
  constructor(
    message: string,
    /** The offending field, e.g. "killRank.rank" or "config.saltHex". */
    readonly field?: string,
  ) {
    super(message);
  }
}

/** Limits that keep a hostile or mistaken command from exhausting the machine. */
export const COMMAND_LIMITS = {
  maxHosts: TOPOLOGY_LIMITS.maxHosts,
  maxCompareRounds: 1000,
  maxRank: 1 << 16,
  maxFaultMs: NUMBER_RANGES.faultMs.max,
  maxLinkId: 64,
  maxIntervalMs: TOPOLOGY_LIMITS.maxIntervalMs,
  maxModelBytes: TOPOLOGY_LIMITS.maxModelBytes,
} as const;

const failField: Fail = (field, message) => {
  throw new LabCommandError(message, field);
};
function fail(message: string): never {
  throw new LabCommandError(message);
}
const int = (v: unknown, where: string, min: number, max: number) => intOf(failField, v, where, min, max);
const oneOf = <T extends string>(v: unknown, where: string, values: readonly T[]) =>
  oneOfOf(failField, v, where, values);
const bool = (v: unknown, where: string) => boolOf(failField, v, where);
const onlyKeys = (obj: Plain, allowed: readonly string[], where: string) =>
  onlyKeysOf(failField, obj, allowed, where);

/** A window's topology config: parseTopologyConfig's checks, as a LabCommandError naming the field. */
export function validateTopologyConfig(v: unknown, where = 'config') {
  try {
    return parseTopologyConfig(v, { where });
  } catch (e) {
    if (e instanceof TopologyConfigError) throw new LabCommandError(e.message, e.field);
    throw e;
  }
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

export function validateLinkFault(v: unknown, where = 'fault'): LinkFault {
  if (!isPlainObject(v)) fail(`${where} must be an object or null`);
  onlyKeys(v, FAULT_KEYS, where);
  const fault: LinkFault = { dir: oneOf(v.dir, `${where}.dir`, ['up', 'down', 'both'] as const) };
  // The ranges of `run --link-fault` and the window's fault controls (number-ranges.ts).
  const ranged = (x: unknown, key: string, r: NumberRange) => int(x, `${where}.${key}`, r.min, r.max);
  const R = NUMBER_RANGES;
  if (v.latencyMs !== undefined) fault.latencyMs = ranged(v.latencyMs, 'latencyMs', R.faultMs);
  if (v.jitterMs !== undefined) fault.jitterMs = ranged(v.jitterMs, 'jitterMs', R.faultMs);
  if (v.bandwidth !== undefined) fault.bandwidth = ranged(v.bandwidth, 'bandwidth', R.bandwidth);
  if (v.sliceBytes !== undefined) fault.sliceBytes = ranged(v.sliceBytes, 'sliceBytes', R.sliceBytes);
  if (v.sliceGapMs !== undefined) fault.sliceGapMs = ranged(v.sliceGapMs, 'sliceGapMs', R.faultMs);
  if (v.stallMs !== undefined) fault.stallMs = ranged(v.stallMs, 'stallMs', R.faultMs);
  if (v.corruptNext !== undefined) fault.corruptNext = bool(v.corruptNext, `${where}.corruptNext`);
  if (v.reset !== undefined) fault.reset = bool(v.reset, `${where}.reset`);
  if (v.blackhole !== undefined) fault.blackhole = bool(v.blackhole, `${where}.blackhole`);
  return fault;
}

/** A trace file name inside the traces folder: no folders, no dot files. */
export const TRACE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}\.ndjson$/;
/** A capture file name inside the traces folder (an upload, or the lab's own pcapng export). */
export const CAPTURE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}\.(pcap|pcapng|cap)$/;
/** A reproduction file is small (a topology, a schedule, expectations): 1 MiB is far beyond any. */
export const MAX_REPRO_TEXT = 1024 * 1024;
/** At most this many records in one recentRecords reply. */
export const MAX_RECENT_RECORDS = 20_000;
/** At most this many records in one earlierRecords reply (the default). */
export const MAX_EARLIER_RECORDS = 2000;

type Validator<T extends CommandType> = (v: Plain, type: T) => CommandOf<T>;

/** A command with no fields but its type. */
function bare<T extends CommandType>(v: Plain, type: T): CommandOf<T> {
  onlyKeys(v, ['type'], type);
  return { type } as CommandOf<T>;
}

function rankCommand<T extends 'killRank' | 'pauseRank' | 'resumeRank'>(v: Plain, type: T): CommandOf<T> {
  onlyKeys(v, ['type', 'rank'], type);
  return { type, rank: int(v.rank, `${type}.rank`, 0, COMMAND_LIMITS.maxRank) } as CommandOf<T>;
}

/** A reproduction file's text (its content is checked by the handler's parser, which names the path of a mistake). */
function reproText(v: Plain, type: 'saveRepro' | 'runRepro'): string {
  onlyKeys(v, ['type', 'text'], type);
  if (typeof v.text !== 'string' || v.text.length < 2 || v.text.length > MAX_REPRO_TEXT)
    failField(
      `${type}.text`,
      `${type}.text must be a reproduction file's JSON text (at most ${MAX_REPRO_TEXT} characters)`,
    );
  return v.text;
}

/** Sweep commands are checked by the sweep's own validator (src-shared/sweep/validate-command.ts). */
function sweepCommand<T extends 'sweep' | 'cancelSweep' | 'saveSweep' | 'listSweeps' | 'openSweep'>(
  v: Plain,
  _type: T,
): CommandOf<T> {
  try {
    return validateSweepCommand(v) as CommandOf<T>;
  } catch (e) {
    return fail((e as Error).message);
  }
}

/** A tap check's TapSpecError as the LabCommandError every transport answers with. */
function tapField<T>(check: () => T): T {
  try {
    return check();
  } catch (e) {
    if (e instanceof TapSpecError) throw new LabCommandError(e.message, e.field);
    throw e;
  }
}

/** One validator per command type; the mapped type makes a missing one a compile error. */
const VALIDATORS: { [T in CommandType]: Validator<T> } = {
  sweep: sweepCommand,
  cancelSweep: sweepCommand,
  saveSweep: sweepCommand,
  listSweeps: sweepCommand,
  openSweep: sweepCommand,
  start: (v, type) => {
    onlyKeys(v, ['type', 'config'], type);
    return v.config === undefined ? { type } : { type, config: validateTopologyConfig(v.config) };
  },
  stop: bare,
  pauseRounds: bare,
  resumeRounds: bare,
  stepRound: bare,
  snapshot: bare,
  listScenarios: bare,
  listTraces: bare,
  closeTrace: bare,
  runScenario: (v, type) => {
    onlyKeys(v, ['type', 'name'], type);
    if (typeof v.name !== 'string' || !/^[a-z0-9][a-z0-9-]{0,63}$/.test(v.name))
      failField('runScenario.name', 'runScenario.name must be a scenario name such as mid-frame-desync');
    return { type, name: v.name };
  },
  reproRecord: (v, type) => {
    onlyKeys(v, ['type', 'on'], type);
    if (v.on === undefined) return { type };
    if (typeof v.on !== 'boolean') failField('reproRecord.on', 'reproRecord.on must be true or false');
    return { type, on: v.on };
  },
  draftRepro: bare,
  saveRepro: (v, type) => ({ type, text: reproText(v, type) }),
  runRepro: (v, type) => ({ type, text: reproText(v, type) }),
  killRank: rankCommand,
  pauseRank: rankCommand,
  resumeRank: rankCommand,
  killHost: (v, type) => {
    onlyKeys(v, ['type', 'host'], type);
    return { type, host: int(v.host, 'killHost.host', 0, COMMAND_LIMITS.maxHosts - 1) };
  },
  setSpeed: (v, type) => {
    onlyKeys(v, ['type', 'roundIntervalMs'], type);
    return {
      type,
      roundIntervalMs: int(v.roundIntervalMs, 'setSpeed.roundIntervalMs', 0, COMMAND_LIMITS.maxIntervalMs),
    };
  },
  compareModes: (v, type) => {
    onlyKeys(v, ['type', 'config', 'rounds'], type);
    const cmd: CommandOf<'compareModes'> = { type };
    if (v.config !== undefined) cmd.config = validateTopologyConfig(v.config);
    if (v.rounds !== undefined)
      cmd.rounds = int(v.rounds, 'compareModes.rounds', 1, COMMAND_LIMITS.maxCompareRounds);
    return cmd;
  },
  setLinkFault: (v, type) => {
    onlyKeys(v, ['type', 'link', 'fault'], type);
    if (
      typeof v.link !== 'string' ||
      v.link.length < 1 ||
      v.link.length > COMMAND_LIMITS.maxLinkId ||
      !/^[A-Za-z0-9._-]+$/.test(v.link)
    ) {
      failField('setLinkFault.link', 'setLinkFault.link must be a link id such as h0.uplink.data');
    }
    if (!('fault' in v)) failField('setLinkFault.fault', 'setLinkFault.fault must be a fault object or null');
    return {
      type,
      link: v.link,
      fault: v.fault === null ? null : validateLinkFault(v.fault, 'setLinkFault.fault'),
    };
  },
  getRecordBytes: (v, type) => {
    onlyKeys(v, ['type', 'seq'], type);
    return { type, seq: int(v.seq, 'getRecordBytes.seq', 0, Number.MAX_SAFE_INTEGER) };
  },
  saveTrace: (v, type) => {
    onlyKeys(v, ['type', 'format'], type);
    return { type, format: oneOf(v.format, 'saveTrace.format', ['ndjson', 'pcapng'] as const) };
  },
  openTrace: (v, type) => {
    onlyKeys(v, ['type', 'name'], type);
    if (v.name === undefined) return { type };
    if (typeof v.name !== 'string' || !TRACE_NAME.test(v.name))
      failField(
        'openTrace.name',
        'openTrace.name must be a file name in the traces folder ending in .ndjson (no folders)',
      );
    return { type, name: v.name };
  },
  seekTrace: (v, type) => {
    onlyKeys(v, ['type', 't'], type);
    if (typeof v.t !== 'number' || !Number.isFinite(v.t) || v.t < 0)
      failField('seekTrace.t', 'seekTrace.t must be a finite number of milliseconds, 0 or more');
    return { type, t: v.t };
  },
  startTap: (v, type) => {
    onlyKeys(v, ['type', 'tap'], type);
    return { type, tap: tapField(() => validateTapSpec(v.tap, 'startTap.tap')) };
  },
  stopTap: (v, type) => {
    onlyKeys(v, ['type', 'id'], type);
    return { type, id: int(v.id, 'stopTap.id', 0, Number.MAX_SAFE_INTEGER) };
  },
  listTaps: bare,
  showTaps: bare,
  attach: (v, type) => {
    onlyKeys(v, ['type', 'address', 'token'], type);
    if (typeof v.address !== 'string' || !/^[A-Za-z0-9.:[\]-]{1,255}:\d{1,5}$/.test(v.address))
      failField('attach.address', 'attach.address must be HOST:PORT, e.g. 127.0.0.1:7450');
    const port = Number(v.address.slice(v.address.lastIndexOf(':') + 1));
    if (port < 1 || port > 65535) failField('attach.address', 'attach.address needs a port from 1 to 65535');
    if (typeof v.token !== 'string' || !/^[A-Za-z0-9_-]{16,128}$/.test(v.token))
      failField('attach.token', "attach.token must be the job's token (its folder's watch.json)");
    return { type, address: v.address, token: v.token };
  },
  detach: bare,
  jobTrace: (v, type) => {
    onlyKeys(v, ['type', 'offset', 'until'], type);
    const offset = int(v.offset, 'jobTrace.offset', 0, Number.MAX_SAFE_INTEGER);
    if (v.until === undefined) {
      // The first request fixes the length: it starts at the beginning.
      if (offset !== 0)
        failField('jobTrace.until', 'jobTrace.until must name the length a later piece is of');
      return { type, offset };
    }
    const until = int(v.until, 'jobTrace.until', 1, Number.MAX_SAFE_INTEGER);
    if (offset >= until) failField('jobTrace.offset', 'jobTrace.offset must be below jobTrace.until');
    return { type, offset, until };
  },
  openCapture: (v, type) => {
    onlyKeys(v, ['type', 'name', 'saltHex'], type);
    const saltHex = tapField(() => saltHexOf(v.saltHex, 'openCapture.saltHex'));
    if (v.name === undefined) return { type, saltHex };
    if (typeof v.name !== 'string' || !CAPTURE_NAME.test(v.name))
      failField(
        'openCapture.name',
        'openCapture.name must be a file name in the traces folder ending in .pcap, .pcapng or .cap',
      );
    return { type, name: v.name, saltHex };
  },
  stepTrace: (v, type) => {
    onlyKeys(v, ['type', 'by', 'dir'], type);
    if (v.by !== 'unit' && v.by !== 'round' && v.by !== 'finding')
      failField('stepTrace.by', "stepTrace.by must be 'unit', 'round' or 'finding'");
    if (v.dir !== 1 && v.dir !== -1) failField('stepTrace.dir', 'stepTrace.dir must be 1 or -1');
    return { type, by: v.by, dir: v.dir };
  },
  earlierRecords: (v, type) => {
    onlyKeys(v, ['type', 'before', 'limit'], type);
    const before = int(v.before, 'earlierRecords.before', 0, Number.MAX_SAFE_INTEGER);
    return v.limit === undefined
      ? { type, before }
      : { type, before, limit: int(v.limit, 'earlierRecords.limit', 1, MAX_EARLIER_RECORDS) };
  },
  recentRecords: (v, type) => {
    onlyKeys(v, ['type', 'limit'], type);
    return v.limit === undefined
      ? { type }
      : { type, limit: int(v.limit, 'recentRecords.limit', 1, MAX_RECENT_RECORDS) };
  },
};

const COMMAND_TYPES = Object.keys(VALIDATORS) as CommandType[];

/** Checks an untrusted value and returns a fresh, well-formed command, or throws LabCommandError. */
export function validateLabCommand(v: unknown): AnyCommand {
  if (!isPlainObject(v)) fail('command must be an object');
  const type = oneOf(v.type, 'command.type', COMMAND_TYPES);
  return (VALIDATORS[type] as Validator<CommandType>)(v, type) as AnyCommand;
}

/** The reply a transport sends for a command that failed validation. */
export function badCommandReply(e: unknown): { ok: false; error: string; message: string } {
  const message = e instanceof Error ? e.message : String(e);
  return { ok: false, error: BAD_COMMAND, message };
}
