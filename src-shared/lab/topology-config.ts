// The one check of a topology config, for every way one arrives: the
// window's start and compareModes commands (validate.ts), `relay-lab run`'s
// flags, and the lab's own callers (compare, scenarios, bench) when the
// session starts. One set of limits; errors name the field.
import {
  DEFAULT_TOPOLOGY,
  type LossPolicy,
  type TopologyConfig,
  type UplinkMode,
  type WireDtype,
} from './topology';
import { isPlainObject, int, oneOf, onlyKeys, type Fail } from './field-checks';
import { CONTROL_INDEX_TABLES, type ControlIndexTable } from '../wire/control-msg-tables';
import { parseSessionSalt, SaltError, type SessionSalt } from './session-salt';
import { shellWords, ShellWordsError } from './shell-words';

/** Limits that keep a mistaken or hostile config from exhausting the machine. */
export const TOPOLOGY_LIMITS = {
  /** Rank OS processes in one topology. */
  maxTotalRanks: 64,
  maxHosts: 16,
  maxRanksPerHost: 32,
  /** Every rank holds a model this big. */
  maxModelBytes: 512 * 1024 * 1024,
  maxIntervalMs: 60_000,
  minStalenessMs: 50,
  maxStalenessMs: 600_000,
  minStarvationMs: 100,
  maxStarvationMs: 600_000,
  maxTensors: 1024,
  /** Snap length: enough for every header and control message; at most 16 MiB kept of a unit. */
  minSnapLen: 64,
  maxSnapLen: 16 * 1024 * 1024,
  maxTensorDims: 8,
  /** Characters of an external relay's command line. */
  maxCommandChars: 4096,
} as const;

export class TopologyConfigError extends Error {
  override readonly name = 'TopologyConfigError';
  readonly code = 'BAD_CONFIG';
  constructor(
    /** The offending field, e.g. "config.ranksPerHost[1]". */
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

const fail: Fail = (field, message) => {
  throw new TopologyConfigError(field, message);
};

/** The fields a front end may set. */
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
  'starvationMs',
  'controlVersion',
  'controlIndexTable',
  'dataVersion',
  'snapLen',
  'relayCommands',
] as const;
/** Fields only the lab's own callers set (scenarios: tensor shapes, idle ranks). */
const LAB_KEYS = ['shapes', 'idleRanks'] as const;

export interface ParseTopologyOptions {
  /** Names the object in errors ("config", "compareModes.config"). */
  where?: string;
  /** Accept the lab-only fields (shapes, idleRanks); front ends may not set them. */
  labFields?: boolean;
}

/**
 * Checks an untrusted partial config field by field and rebuilds it (nothing
 * unexpected survives). The salt, when given, comes back as lowercase hex.
 */
export function parseTopologyConfig(v: unknown, opts: ParseTopologyOptions = {}): Partial<TopologyConfig> {
  const where = opts.where ?? 'config';
  const L = TOPOLOGY_LIMITS;
  if (!isPlainObject(v)) fail(where, `${where} must be an object`);
  onlyKeys(fail, v, opts.labFields ? [...CONFIG_KEYS, ...LAB_KEYS] : CONFIG_KEYS, where);
  const out: Partial<TopologyConfig> = {};
  if (v.ranksPerHost !== undefined) {
    const rph = v.ranksPerHost;
    const f = `${where}.ranksPerHost`;
    if (!Array.isArray(rph) || rph.length < 1) fail(f, `${f} must be an array of at least 1 host`);
    // Every host has a rank: more hosts than the rank limit is over it, whatever the entries.
    if (rph.length > L.maxTotalRanks) fail(f, `${f}: at most ${L.maxTotalRanks} ranks in all`);
    if (rph.length > L.maxHosts) fail(f, `${f}: at most ${L.maxHosts} hosts`);
    out.ranksPerHost = rph.map((k, i) => int(fail, k, `${f}[${i}]`, 1, L.maxRanksPerHost));
    if (out.ranksPerHost.reduce((a, b) => a + b, 0) > L.maxTotalRanks)
      fail(f, `${f}: at most ${L.maxTotalRanks} ranks in all`);
  }
  if (v.modelBytes !== undefined) {
    out.modelBytes = int(fail, v.modelBytes, `${where}.modelBytes`, 4, L.maxModelBytes);
    if (out.modelBytes % 4 !== 0)
      fail(`${where}.modelBytes`, `${where}.modelBytes must be a multiple of 4 (f32 elements)`);
  }
  if (v.dtype !== undefined) out.dtype = oneOf<WireDtype>(fail, v.dtype, `${where}.dtype`, ['f32', 'bf16']);
  if (v.mode !== undefined)
    out.mode = oneOf<UplinkMode>(fail, v.mode, `${where}.mode`, ['fold', 'forward', 'direct']);
  if (v.policy !== undefined)
    out.policy = oneOf<LossPolicy>(fail, v.policy, `${where}.policy`, ['elastic', 'strict']);
  if (v.saltHex !== undefined) {
    if (typeof v.saltHex !== 'string') fail(`${where}.saltHex`, `${where}.saltHex must be 32 hex chars`);
    out.saltHex = parseSalt(v.saltHex, `${where}.saltHex`).hex;
  }
  if (v.seed !== undefined) out.seed = int(fail, v.seed, `${where}.seed`, 0, 0xffffffff);
  if (v.rounds !== undefined) out.rounds = int(fail, v.rounds, `${where}.rounds`, 0, Number.MAX_SAFE_INTEGER);
  if (v.roundIntervalMs !== undefined)
    out.roundIntervalMs = int(fail, v.roundIntervalMs, `${where}.roundIntervalMs`, 0, L.maxIntervalMs);
  if (v.stalenessMs !== undefined)
    out.stalenessMs = int(fail, v.stalenessMs, `${where}.stalenessMs`, L.minStalenessMs, L.maxStalenessMs);
  if (v.starvationMs !== undefined)
    out.starvationMs = int(
      fail,
      v.starvationMs,
      `${where}.starvationMs`,
      L.minStarvationMs,
      L.maxStarvationMs,
    );
  if (v.controlVersion !== undefined)
    out.controlVersion = int(fail, v.controlVersion, `${where}.controlVersion`, 1, 255);
  if (v.controlIndexTable !== undefined)
    out.controlIndexTable = oneOf<ControlIndexTable>(
      fail,
      v.controlIndexTable,
      `${where}.controlIndexTable`,
      CONTROL_INDEX_TABLES,
    );
  if (v.dataVersion !== undefined) out.dataVersion = int(fail, v.dataVersion, `${where}.dataVersion`, 1, 255);
  if (v.snapLen !== undefined)
    out.snapLen = int(fail, v.snapLen, `${where}.snapLen`, L.minSnapLen, L.maxSnapLen);
  if (v.relayCommands !== undefined)
    out.relayCommands = parseRelayCommands(v.relayCommands, `${where}.relayCommands`);
  if (v.shapes !== undefined) out.shapes = parseShapes(v.shapes, `${where}.shapes`);
  if (v.idleRanks !== undefined) {
    const f = `${where}.idleRanks`;
    if (!Array.isArray(v.idleRanks)) fail(f, `${f} must be an array of ranks`);
    out.idleRanks = v.idleRanks.map((r, i) => int(fail, r, `${f}[${i}]`, 0, L.maxTotalRanks - 1));
  }
  return out;
}

function parseRelayCommands(v: unknown, f: string): (string | null)[] {
  if (!Array.isArray(v) || v.length > TOPOLOGY_LIMITS.maxHosts)
    fail(f, `${f} must be an array with a command or null per host`);
  return v.map((c, i) => {
    if (c === null) return null;
    if (typeof c !== 'string' || c.length > TOPOLOGY_LIMITS.maxCommandChars)
      fail(
        `${f}[${i}]`,
        `${f}[${i}] must be a command line (up to ${TOPOLOGY_LIMITS.maxCommandChars} characters) or null`,
      );
    let words: string[];
    try {
      words = shellWords(c);
    } catch (e) {
      if (e instanceof ShellWordsError) fail(`${f}[${i}]`, `${f}[${i}]: ${e.message}`);
      throw e;
    }
    if (words.length === 0 || words[0] === '') fail(`${f}[${i}]`, `${f}[${i}] names no program`);
    return c.trim();
  });
}

function parseShapes(v: unknown, f: string): number[][] {
  const L = TOPOLOGY_LIMITS;
  if (!Array.isArray(v) || v.length === 0 || v.length > L.maxTensors)
    fail(f, `${f} must list 1..${L.maxTensors} tensors`);
  const shapes = v.map((dims, i) => {
    if (!Array.isArray(dims) || dims.length > L.maxTensorDims)
      fail(`${f}[${i}]`, `${f}[${i}] needs up to ${L.maxTensorDims} positive dims`);
    return dims.map((x, j) => int(fail, x, `${f}[${i}][${j}]`, 1, L.maxModelBytes / 4));
  });
  const elements = shapes.reduce((a, d) => a + d.reduce((x, y) => x * y, 1), 0);
  if (elements * 4 > L.maxModelBytes) fail(f, `${f} exceed ${L.maxModelBytes / 1024 ** 2} MiB`);
  return shapes;
}

function parseSalt(text: string, field: string): SessionSalt {
  try {
    return parseSessionSalt(text, field);
  } catch (e) {
    if (e instanceof SaltError) fail(field, e.message);
    throw e;
  }
}

/** A whole config, ready to run, and its salt in the one form the lab uses. */
export interface ResolvedTopology {
  config: TopologyConfig & { saltHex: string };
  salt: SessionSalt;
}

/**
 * Fills the defaults, checks every field (lab-only ones included) and the
 * fields against each other, and turns the salt text into a SessionSalt (or
 * takes a fresh one from `randomSalt` when the config names none).
 */
export function resolveTopologyConfig(
  partial: Partial<TopologyConfig>,
  randomSalt: () => SessionSalt,
): ResolvedTopology {
  const { saltHex, ...rest } = partial;
  const checked = parseTopologyConfig({ ...DEFAULT_TOPOLOGY, ...rest }, { labFields: true });
  const config = { ...DEFAULT_TOPOLOGY, ...checked };
  const world = config.ranksPerHost.reduce((a, b) => a + b, 0);
  if (config.idleRanks?.some((r) => r >= world))
    fail('config.idleRanks', `config.idleRanks must be ranks of the world (0..${world - 1})`);
  if (config.relayCommands) {
    if (config.relayCommands.length > config.ranksPerHost.length)
      fail(
        'config.relayCommands',
        `config.relayCommands names ${config.relayCommands.length} hosts; the topology has ${config.ranksPerHost.length}`,
      );
    if (config.relayCommands.some((c) => c !== null) && config.mode !== 'fold')
      fail(
        'config.relayCommands',
        `an external relay runs flodl's fold; mode ${config.mode} has no such relay`,
      );
    // No command anywhere: the lab's own relays, the same config as without the field.
    if (config.relayCommands.every((c) => c === null)) delete config.relayCommands;
  }
  const salt = saltHex === undefined ? randomSalt() : parseSalt(saltHex, 'config.saltHex');
  return { config: { ...config, saltHex: salt.hex }, salt };
}
