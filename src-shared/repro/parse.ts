// (Just over 400 lines: one validator per field of the format, in the format's order, so the
// file reads like docs/reproduction-format.md.)
// Parses and validates a reproduction file (versions 1 and 2). Every error is a
// ReproFormatError with a code and the JSON path of the offending value
// (`schedule[2].rank`), so a hand-edited file says where it is wrong.
import type { LinkFault } from '../lab/contract';
import { NUMBER_RANGES as R, rangeText, type NumberRange } from '../lab/number-ranges';
import { CONTROL_INDEX_TABLES, DEFAULT_CONTROL_INDEX_TABLE } from '../wire/control-msg-tables';
import {
  REPRO_FORMAT,
  REPRO_VERSIONS,
  reproLinkIds,
  type ActionGates,
  type FindingPattern,
  type LinkBytesExpectation,
  type Repro,
  type ReproAction,
  type ReproExpectations,
  type ReproTopology,
  type RoundExpectation,
} from './types';

export type ReproErrorCode =
  | 'NOT_JSON'
  | 'WRONG_FORMAT'
  | 'UNSUPPORTED_VERSION'
  | 'UNKNOWN_FIELD'
  | 'MISSING_FIELD'
  | 'BAD_TYPE'
  | 'BAD_VALUE'
  | 'RANK_OUT_OF_RANGE'
  | 'HOST_OUT_OF_RANGE'
  | 'ROUND_OUT_OF_RANGE'
  | 'UNKNOWN_LINK'
  | 'UNSUPPORTED_ACTION';

export class ReproFormatError extends Error {
  constructor(
    readonly code: ReproErrorCode,
    /** JSON path of the value, '' for the whole file. */
    readonly path: string,
    detail: string,
  ) {
    super(`${code} at ${path || '(file)'}: ${detail}`);
    this.name = 'ReproFormatError';
  }
}

type Obj = Record<string, unknown>;

function obj(v: unknown, path: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new ReproFormatError('BAD_TYPE', path, 'must be an object');
  return v as Obj;
}

function onlyKeys(o: Obj, path: string, allowed: readonly string[]): void {
  for (const k of Object.keys(o))
    if (!allowed.includes(k))
      throw new ReproFormatError(
        'UNKNOWN_FIELD',
        join(path, k),
        `unknown field (allowed: ${allowed.join(', ')})`,
      );
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

function int(v: unknown, path: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isInteger(v))
    throw new ReproFormatError('BAD_TYPE', path, `must be an integer, got ${JSON.stringify(v)}`);
  if (v < min || v > max)
    throw new ReproFormatError('BAD_VALUE', path, `must be in ${min}..${max}, got ${v}`);
  return v;
}

function num(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
    throw new ReproFormatError('BAD_TYPE', path, `must be a number >= 0, got ${JSON.stringify(v)}`);
  return v;
}

/** A number within one of the lab's ranges (the command line's and the window's): named when outside it. */
function ranged(v: unknown, path: string, range: NumberRange): number {
  const n = range.kind === 'int' ? int(v, path) : num(v, path);
  if (n < range.min || n > range.max)
    throw new ReproFormatError('BAD_VALUE', path, `${n} is outside ${rangeText(range)}`);
  return n;
}

function str(v: unknown, path: string): string {
  if (typeof v !== 'string')
    throw new ReproFormatError('BAD_TYPE', path, `must be a string, got ${JSON.stringify(v)}`);
  return v;
}

function choice<T extends string>(v: unknown, path: string, options: readonly T[]): T {
  if (typeof v !== 'string' || !(options as readonly string[]).includes(v))
    throw new ReproFormatError(
      'BAD_VALUE',
      path,
      `must be one of ${options.join(', ')}, got ${JSON.stringify(v)}`,
    );
  return v as T;
}

function arr(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) throw new ReproFormatError('BAD_TYPE', path, 'must be an array');
  return v;
}

function need(o: Obj, key: string, path: string): unknown {
  if (!(key in o)) throw new ReproFormatError('MISSING_FIELD', join(path, key), 'is required');
  return o[key];
}

/** Line and column of a JSON.parse position, for NOT_JSON. */
function lineCol(text: string, message: string): string {
  const m = /position (\d+)/.exec(message);
  if (!m) return '';
  const before = text.slice(0, Number(m[1])).split('\n');
  return ` (line ${before.length}, column ${before[before.length - 1].length + 1})`;
}

const TOPOLOGY_KEYS = [
  'hosts',
  'ranksPerHost',
  'mode',
  'policy',
  'dtype',
  'modelBytes',
  'seed',
  'saltHex',
  'stalenessMs',
  'intervalMs',
  'rounds',
  'controlIndexTable',
  'relays',
] as const;

function parseTopology(v: unknown): ReproTopology {
  const p = 'topology';
  const o = obj(v, p);
  onlyKeys(o, p, TOPOLOGY_KEYS);
  const rph = need(o, 'ranksPerHost', p);
  let ranksPerHost: number[];
  if (Array.isArray(rph)) {
    if ('hosts' in o)
      throw new ReproFormatError('BAD_VALUE', `${p}.hosts`, 'a ranksPerHost list already gives the hosts');
    if (rph.length === 0)
      throw new ReproFormatError('BAD_VALUE', `${p}.ranksPerHost`, 'needs at least one host');
    ranksPerHost = rph.map((k, i) => int(k, `${p}.ranksPerHost[${i}]`, 1, 64));
  } else {
    const hosts = int(need(o, 'hosts', p), `${p}.hosts`, 1, 64);
    const k = int(rph, `${p}.ranksPerHost`, 1, 64);
    ranksPerHost = Array.from({ length: hosts }, () => k);
  }
  const t: ReproTopology = {
    ranksPerHost,
    mode: o.mode === undefined ? 'fold' : choice(o.mode, `${p}.mode`, ['fold', 'forward', 'direct'] as const),
    policy:
      o.policy === undefined ? 'elastic' : choice(o.policy, `${p}.policy`, ['elastic', 'strict'] as const),
    dtype: o.dtype === undefined ? 'f32' : choice(o.dtype, `${p}.dtype`, ['f32', 'bf16'] as const),
    modelBytes: int(need(o, 'modelBytes', p), `${p}.modelBytes`, 4),
    seed: ranged(need(o, 'seed', p), `${p}.seed`, R.seed),
    stalenessMs:
      o.stalenessMs === undefined ? 3000 : ranged(o.stalenessMs, `${p}.stalenessMs`, R.stalenessMs),
    intervalMs: o.intervalMs === undefined ? 0 : ranged(o.intervalMs, `${p}.intervalMs`, R.roundIntervalMs),
    rounds: ranged(need(o, 'rounds', p), `${p}.rounds`, R.rounds),
    // Files written before the setting existed speak the v2 table.
    controlIndexTable:
      o.controlIndexTable === undefined
        ? DEFAULT_CONTROL_INDEX_TABLE
        : choice(o.controlIndexTable, `${p}.controlIndexTable`, CONTROL_INDEX_TABLES),
  };
  if (o.relays !== undefined) {
    if (!Array.isArray(o.relays)) throw new ReproFormatError('BAD_VALUE', `${p}.relays`, 'must be a list');
    t.relays = o.relays.map((r: unknown, i: number) => {
      const q = `${p}.relays[${i}]`;
      const ro = obj(r, q);
      onlyKeys(ro, q, ['host', 'command', 'sha256'] as const);
      const host = int(need(ro, 'host', q), `${q}.host`, 0, ranksPerHost.length - 1);
      const command = str(need(ro, 'command', q), `${q}.command`);
      const sha = ro.sha256 === undefined || ro.sha256 === null ? null : str(ro.sha256, `${q}.sha256`);
      if (sha !== null && !/^[0-9a-f]{64}$/.test(sha))
        throw new ReproFormatError('BAD_VALUE', `${q}.sha256`, 'must be 64 lowercase hex characters or null');
      return { host, command, sha256: sha };
    });
  }
  if (o.saltHex !== undefined) {
    const s = str(o.saltHex, `${p}.saltHex`);
    if (!/^[0-9a-fA-F]{32}$/.test(s))
      throw new ReproFormatError('BAD_VALUE', `${p}.saltHex`, 'must be 32 hex characters');
    t.saltHex = s.toLowerCase();
  }
  return t;
}

const FAULT_RANGES = {
  latencyMs: R.faultMs,
  jitterMs: R.faultMs,
  bandwidth: R.bandwidth,
  sliceBytes: R.sliceBytes,
  sliceGapMs: R.faultMs,
  stallMs: R.faultMs,
} as const;
const FAULT_NUMBERS = Object.keys(FAULT_RANGES) as (keyof typeof FAULT_RANGES)[];
const FAULT_FLAGS = ['corruptNext', 'reset', 'blackhole'] as const;

function parseFault(v: unknown, path: string): LinkFault {
  const o = obj(v, path);
  onlyKeys(o, path, ['dir', ...FAULT_NUMBERS, ...FAULT_FLAGS, 'shareKey']);
  const f: LinkFault = { dir: choice(need(o, 'dir', path), `${path}.dir`, ['up', 'down', 'both'] as const) };
  for (const k of FAULT_NUMBERS) if (o[k] !== undefined) f[k] = ranged(o[k], `${path}.${k}`, FAULT_RANGES[k]);
  for (const k of FAULT_FLAGS)
    if (o[k] !== undefined) {
      if (typeof o[k] !== 'boolean')
        throw new ReproFormatError('BAD_TYPE', `${path}.${k}`, 'must be true or false');
      f[k] = o[k];
    }
  // Links whose faults share a key share one schedule (one host's NIC), as the window sets them.
  if (o.shareKey !== undefined) f.shareKey = str(o.shareKey, `${path}.shareKey`);
  return f;
}

const GATE_KEYS = ['after', 'afterDead', 'afterMs', 'atMs'] as const;

/** The version 2 gates of an action (docs/reproduction-format.md, "When an action applies"). */
function parseGates(o: Obj, path: string, world: number): ActionGates {
  const g: ActionGates = {};
  if (o.after !== undefined)
    g.after = choice(o.after, `${path}.after`, ['consensus', 'adoption', 'check'] as const);
  if (o.afterDead !== undefined)
    g.afterDead = arr(o.afterDead, `${path}.afterDead`).map((x, i) => {
      const r = int(x, `${path}.afterDead[${i}]`);
      if (r >= world)
        throw new ReproFormatError(
          'RANK_OUT_OF_RANGE',
          `${path}.afterDead[${i}]`,
          `rank ${r} does not exist (ranks 0..${world - 1})`,
        );
      return r;
    });
  if (o.afterMs !== undefined) g.afterMs = num(o.afterMs, `${path}.afterMs`);
  if (o.atMs !== undefined) g.atMs = num(o.atMs, `${path}.atMs`);
  return g;
}

function parseAction(v: unknown, path: string, t: ReproTopology, links: string[]): ReproAction {
  const o = obj(v, path);
  const world = t.ranksPerHost.reduce((a, b) => a + b, 0);
  const gates = parseGates(o, path, world);
  const keys = (...own: string[]) => onlyKeys(o, path, ['round', 'action', ...own, ...GATE_KEYS]);
  const action = str(need(o, 'action', path), `${path}.action`);
  const round = int(need(o, 'round', path), `${path}.round`);
  if (round >= t.rounds)
    throw new ReproFormatError(
      'ROUND_OUT_OF_RANGE',
      `${path}.round`,
      `round ${round} never happens: rounds are 0..${t.rounds - 1}`,
    );
  const rank = () => {
    const r = int(need(o, 'rank', path), `${path}.rank`);
    if (r >= world)
      throw new ReproFormatError(
        'RANK_OUT_OF_RANGE',
        `${path}.rank`,
        `rank ${r} does not exist (ranks 0..${world - 1})`,
      );
    return r;
  };
  const link = () => {
    const l = str(need(o, 'link', path), `${path}.link`);
    if (!links.includes(l))
      throw new ReproFormatError(
        'UNKNOWN_LINK',
        `${path}.link`,
        `no link '${l}' in this topology (links: ${links.join(', ')})`,
      );
    return l;
  };
  switch (action) {
    case 'kill-rank':
    case 'pause-rank':
    case 'resume-rank':
      keys('rank');
      return { round, action, rank: rank(), ...gates };
    case 'kill-host': {
      keys('host');
      const h = int(need(o, 'host', path), `${path}.host`);
      if (h >= t.ranksPerHost.length)
        throw new ReproFormatError(
          'HOST_OUT_OF_RANGE',
          `${path}.host`,
          `host ${h} does not exist (hosts 0..${t.ranksPerHost.length - 1})`,
        );
      return { round, action, host: h, ...gates };
    }
    case 'link-fault':
      keys('link', 'fault');
      return {
        round,
        action,
        link: link(),
        fault: parseFault(need(o, 'fault', path), `${path}.fault`),
        ...gates,
      };
    case 'clear-link-fault':
      keys('link');
      return { round, action, link: link(), ...gates };
    case 'historical':
      throw new ReproFormatError(
        'UNSUPPORTED_ACTION',
        `${path}.action`,
        "the run path exposes no historical switch; historical behaviours stay in 'relay-lab scenario'",
      );
    default:
      throw new ReproFormatError(
        'BAD_VALUE',
        `${path}.action`,
        `unknown action '${action}' (kill-rank, pause-rank, resume-rank, kill-host, link-fault, clear-link-fault)`,
      );
  }
}

function parsePattern(v: unknown, path: string): FindingPattern {
  const o = obj(v, path);
  onlyKeys(o, path, ['kind', 'message', 'severity']);
  const f: FindingPattern = {};
  if (o.kind !== undefined)
    f.kind = choice(o.kind, `${path}.kind`, [
      'hmac',
      'rejected',
      'dead',
      'stalled',
      'exit',
      'mismatch',
      'fault',
    ] as const);
  if (o.message !== undefined) f.message = str(o.message, `${path}.message`);
  if (o.severity !== undefined)
    f.severity = choice(o.severity, `${path}.severity`, ['error', 'warn', 'info'] as const);
  return f;
}

function parseExpectations(v: unknown, t: ReproTopology, links: string[]): ReproExpectations {
  const p = 'expectations';
  const o = obj(v, p);
  onlyKeys(o, p, ['verdict', 'roundsCompleted', 'rounds', 'dead', 'findings', 'linkBytes']);
  const e: ReproExpectations = {};
  const world = t.ranksPerHost.reduce((a, b) => a + b, 0);
  if (o.verdict !== undefined)
    e.verdict = choice(o.verdict, `${p}.verdict`, ['ok', 'mismatch', 'incomplete', 'error'] as const);
  if (o.roundsCompleted !== undefined)
    e.roundsCompleted = int(o.roundsCompleted, `${p}.roundsCompleted`, 0, t.rounds);
  if (o.rounds !== undefined)
    e.rounds = arr(o.rounds, `${p}.rounds`).map((rv, i) => {
      const rp = `${p}.rounds[${i}]`;
      const ro = obj(rv, rp);
      onlyKeys(ro, rp, ['round', 'verdict', 'consensusSha256', 'mergeOrder']);
      const round = int(need(ro, 'round', rp), `${rp}.round`);
      if (round >= t.rounds)
        throw new ReproFormatError(
          'ROUND_OUT_OF_RANGE',
          `${rp}.round`,
          `round ${round} never happens: rounds are 0..${t.rounds - 1}`,
        );
      const re: RoundExpectation = { round };
      if (ro.mergeOrder !== undefined)
        re.mergeOrder = arr(ro.mergeOrder, `${rp}.mergeOrder`).map((g, j) =>
          arr(g, `${rp}.mergeOrder[${j}]`).map((x, k) => int(x, `${rp}.mergeOrder[${j}][${k}]`)),
        );
      if (ro.verdict !== undefined)
        re.verdict = choice(ro.verdict, `${rp}.verdict`, ['ok', 'mismatch', 'unchecked'] as const);
      if (ro.consensusSha256 !== undefined) {
        const d = str(ro.consensusSha256, `${rp}.consensusSha256`);
        if (!/^[0-9a-f]{64}$/.test(d))
          throw new ReproFormatError(
            'BAD_VALUE',
            `${rp}.consensusSha256`,
            'must be 64 lowercase hex characters',
          );
        re.consensusSha256 = d;
      }
      return re;
    });
  if (o.dead !== undefined)
    e.dead = arr(o.dead, `${p}.dead`).map((r, i) => {
      const rank = int(r, `${p}.dead[${i}]`);
      if (rank >= world)
        throw new ReproFormatError(
          'RANK_OUT_OF_RANGE',
          `${p}.dead[${i}]`,
          `rank ${rank} does not exist (ranks 0..${world - 1})`,
        );
      return rank;
    });
  if (o.findings !== undefined) {
    const fo = obj(o.findings, `${p}.findings`);
    onlyKeys(fo, `${p}.findings`, ['present', 'absent']);
    e.findings = {};
    for (const k of ['present', 'absent'] as const)
      if (fo[k] !== undefined)
        e.findings[k] = arr(fo[k], `${p}.findings.${k}`).map((f, i) =>
          parsePattern(f, `${p}.findings.${k}[${i}]`),
        );
  }
  if (o.linkBytes !== undefined)
    e.linkBytes = arr(o.linkBytes, `${p}.linkBytes`).map((lv, i) => {
      const lp = `${p}.linkBytes[${i}]`;
      const lo = obj(lv, lp);
      onlyKeys(lo, lp, ['link', 'dir', 'min', 'max']);
      const link = str(need(lo, 'link', lp), `${lp}.link`);
      if (!links.includes(link))
        throw new ReproFormatError('UNKNOWN_LINK', `${lp}.link`, `no link '${link}' in this topology`);
      const out: LinkBytesExpectation = {
        link,
        dir: lo.dir === undefined ? 'total' : choice(lo.dir, `${lp}.dir`, ['up', 'down', 'total'] as const),
      };
      if (lo.min !== undefined) out.min = int(lo.min, `${lp}.min`);
      if (lo.max !== undefined) out.max = int(lo.max, `${lp}.max`);
      if (out.min === undefined && out.max === undefined)
        throw new ReproFormatError('MISSING_FIELD', `${lp}.min`, 'a range needs min, max or both');
      return out;
    });
  return e;
}

/** Parses the text of a reproduction file; throws ReproFormatError. */
export function parseRepro(text: string): Repro {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    const m = (e as Error).message;
    throw new ReproFormatError('NOT_JSON', '', `${m}${lineCol(text, m)}`);
  }
  return validateRepro(json);
}

/** Validates an already parsed value (what the window would hand over). */
export function validateRepro(json: unknown): Repro {
  const o = obj(json, '');
  if (o.format !== REPRO_FORMAT)
    throw new ReproFormatError(
      'WRONG_FORMAT',
      'format',
      `must be "${REPRO_FORMAT}", got ${JSON.stringify(o.format)}`,
    );
  const version = REPRO_VERSIONS.find((x) => x === o.version);
  if (version === undefined)
    throw new ReproFormatError(
      'UNSUPPORTED_VERSION',
      'version',
      `this build reads versions ${REPRO_VERSIONS.join(' and ')}, got ${JSON.stringify(o.version)}`,
    );
  onlyKeys(o, '', [
    'format',
    'version',
    'name',
    'description',
    'recordedFrom',
    'topology',
    'timeoutMs',
    'schedule',
    'expectations',
  ]);
  const topology = parseTopology(need(o, 'topology', ''));
  const links = reproLinkIds(topology.ranksPerHost, topology.mode);
  const schedule =
    o.schedule === undefined
      ? []
      : arr(o.schedule, 'schedule').map((a, i) => parseAction(a, `schedule[${i}]`, topology, links));
  const r: Repro = {
    format: REPRO_FORMAT,
    version,
    topology,
    schedule,
    expectations: o.expectations === undefined ? {} : parseExpectations(o.expectations, topology, links),
  };
  if (o.name !== undefined) r.name = str(o.name, 'name');
  if (o.description !== undefined) r.description = str(o.description, 'description');
  if (o.timeoutMs !== undefined) r.timeoutMs = ranged(o.timeoutMs, 'timeoutMs', R.timeoutMs);
  if (o.recordedFrom !== undefined) r.recordedFrom = int(o.recordedFrom, 'recordedFrom');
  return r;
}
