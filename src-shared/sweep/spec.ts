// Sweep choices as people write them (`1x8,2x4,4+2+1`, `fold,direct`) and
// the checks every front end applies before a process starts: the same
// limits as one topology (64 ranks, 512 MiB), plus a cap on the cases.
import type { UplinkMode, WireDtype } from '../lab/topology';
import type { SweepSpec, SweepWarmup } from './types';
import { shellWords } from '../lab/shell-words';

export class SweepSpecError extends Error {
  override readonly name = 'SweepSpecError';
  readonly code = 'BAD_SWEEP';
}

export const SWEEP_LIMITS = {
  maxCases: 64,
  maxRounds: 1000,
  maxWarmupRounds: 100,
  maxRanks: 64,
  maxRanksPerHost: 32,
  maxHosts: 16,
  maxModelBytes: 512 * 1024 * 1024,
  maxLatencyMs: 10_000,
  minBandwidth: 1000,
} as const;

/**
 * The warm-up a case gets when the spec names none (SweepSpec.warmupRounds): 'auto', which
 * runs warm-up rounds until the lab's own JavaScript is compiled (AUTO_WARMUP).
 */
export const DEFAULT_WARMUP: SweepWarmup = 'auto';

/**
 * The 'auto' warm-up: at least `minRounds`, then until `maxRounds` or until the warm-up has
 * taken `maxMs`. Why these: V8 compiles a function once it is hot, and every process runs
 * each of its round's functions about once a round, so the lab's JIT is done after a count
 * of rounds, not of bytes. Measured on a 2-core machine (1x4, 256 KiB, 50 MB/s uplinks): the
 * engine's compiler and GC threads used 12 to 30 ms of CPU per round in rounds 2 to 6, every
 * rank's compiler threads 8 to 17 ms per round in rounds 7 to 10, and the round's median fell
 * from 25 ms (rounds 0-9) to 18 (10-19) and 16 to 17 from round 40 on. Measured again over four
 * runs of 80 rounds (medians): 22.5 ms in rounds 0-9, 17.1 and 17.0 in 10-29, 16.6 in 30-39,
 * 15.4 to 16.0 from round 40 on; the three rounds after a 20-round warm-up read 16.2 to 19.6 ms
 * where the steady state is 16. So the warm-up runs to 40 rounds. A big model's rounds run their
 * loops long enough to be compiled within a round or two, and would make a 40-round warm-up
 * long: `maxMs` ends its warm-up sooner.
 */
export const AUTO_WARMUP = { minRounds: 2, maxRounds: 40, maxMs: 3000 } as const;

/** Is round `round` (0-based), starting `elapsedMs` after the first round did, past the warm-up? */
export function warmupOver(warmup: SweepWarmup, round: number, elapsedMs: number): boolean {
  if (warmup !== 'auto') return round >= warmup;
  return round >= AUTO_WARMUP.maxRounds || (round >= AUTO_WARMUP.minRounds && elapsedMs >= AUTO_WARMUP.maxMs);
}

/** The most warm-up rounds `warmup` can take. */
export function maxWarmupRounds(warmup: SweepWarmup): number {
  return warmup === 'auto' ? AUTO_WARMUP.maxRounds : warmup;
}

/** `auto` or a whole number of rounds (0..maxWarmupRounds). */
export function parseWarmup(text: string): SweepWarmup {
  const t = text.trim().toLowerCase();
  if (t === 'auto') return 'auto';
  const n = Number(t);
  if (t === '' || !isInt(n, 0, SWEEP_LIMITS.maxWarmupRounds))
    fail(`warm-up must be 'auto' or 0..${SWEEP_LIMITS.maxWarmupRounds} rounds, not '${text}'`);
  return n;
}

const MODES: readonly UplinkMode[] = ['fold', 'forward', 'direct'];

function fail(message: string): never {
  throw new SweepSpecError(message);
}

/** `HxK` (H hosts of K ranks) or `a+b+c` (uneven: ranks of each host). */
export function parseTopology(text: string): number[] {
  const t = text.trim();
  const even = /^(\d+)x(\d+)$/.exec(t);
  let hosts: number[];
  if (even) {
    // The host count is checked before the list is made: '1000000000x1' would fill the heap.
    if (Number(even[1]) > SWEEP_LIMITS.maxHosts)
      fail(`topology '${text}': 1..${SWEEP_LIMITS.maxHosts} hosts`);
    hosts = Array.from({ length: Number(even[1]) }, () => Number(even[2]));
  } else if (/^\d+(\+\d+)*$/.test(t)) hosts = t.split('+').map(Number);
  else fail(`topology '${text}' must look like 2x4 (hosts x ranks) or 4+2+1 (ranks of each host)`);
  if (hosts.length < 1 || hosts.length > SWEEP_LIMITS.maxHosts)
    fail(`topology '${text}': 1..${SWEEP_LIMITS.maxHosts} hosts`);
  if (hosts.some((k) => k < 1 || k > SWEEP_LIMITS.maxRanksPerHost))
    fail(`topology '${text}': every host needs 1..${SWEEP_LIMITS.maxRanksPerHost} ranks`);
  if (hosts.reduce((a, b) => a + b, 0) > SWEEP_LIMITS.maxRanks)
    fail(`topology '${text}': at most ${SWEEP_LIMITS.maxRanks} ranks in all`);
  return hosts;
}

/** `1x4` when every host has the same ranks, else `4+2+1`. */
export function topologyLabel(ranksPerHost: readonly number[]): string {
  return ranksPerHost.every((k) => k === ranksPerHost[0])
    ? `${ranksPerHost.length}x${ranksPerHost[0]}`
    : ranksPerHost.join('+');
}

export function parseTopologies(text: string): number[][] {
  const items = text.split(',').filter((s) => s.trim() !== '');
  if (items.length === 0) fail('name at least one topology, e.g. 1x4,2x2,4x1');
  return items.map(parseTopology);
}

export function parseModes(text: string): UplinkMode[] {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) fail('name at least one mode: fold, forward, direct');
  for (const m of items)
    if (!(MODES as readonly string[]).includes(m)) fail(`mode '${m}' must be one of ${MODES.join(', ')}`);
  return [...new Set(items)] as UplinkMode[];
}

function isInt(v: unknown, min: number, max: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
}

/** Checks a spec from any side (flags, the window) and returns a clean copy. */
export function validateSweepSpec(v: unknown): SweepSpec {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail('sweep spec must be an object');
  const s = v as Record<string, unknown>;
  for (const key of Object.keys(s))
    if (
      ![
        'topologies',
        'modes',
        'modelBytes',
        'dtype',
        'rounds',
        'warmupRounds',
        'uplinkBandwidth',
        'uplinkLatencyMs',
        'seed',
        'relayCommand',
      ].includes(key)
    )
      fail(`sweep spec: unknown field '${key}'`);
  if (!Array.isArray(s.topologies) || s.topologies.length === 0) fail('topologies must list at least one');
  const topologies = s.topologies.map((t: unknown) => {
    if (!Array.isArray(t) || !t.every((k) => isInt(k, 1, SWEEP_LIMITS.maxRanksPerHost)))
      fail('every topology must be a list of ranks per host (1..32 each)');
    return parseTopology((t as number[]).join('+'));
  });
  if (!Array.isArray(s.modes)) fail('modes must be a list');
  const modes = parseModes((s.modes as unknown[]).map(String).join(','));
  if (topologies.length * modes.length > SWEEP_LIMITS.maxCases)
    fail(`${topologies.length * modes.length} cases: at most ${SWEEP_LIMITS.maxCases} in one sweep`);
  if (!isInt(s.modelBytes, 4, SWEEP_LIMITS.maxModelBytes)) fail('modelBytes must be 4 B .. 512 MiB');
  if (s.dtype !== 'f32' && s.dtype !== 'bf16') fail('dtype must be f32 or bf16');
  if (!isInt(s.rounds, 1, SWEEP_LIMITS.maxRounds)) fail(`rounds must be 1..${SWEEP_LIMITS.maxRounds}`);
  const out: SweepSpec = {
    topologies,
    modes,
    modelBytes: s.modelBytes,
    dtype: s.dtype as WireDtype,
    rounds: s.rounds,
  };
  if (
    s.warmupRounds !== undefined &&
    s.warmupRounds !== 'auto' &&
    !isInt(s.warmupRounds, 0, SWEEP_LIMITS.maxWarmupRounds)
  )
    fail(`warmupRounds must be 'auto' or 0..${SWEEP_LIMITS.maxWarmupRounds}`);
  out.warmupRounds = (s.warmupRounds as SweepWarmup | undefined) ?? DEFAULT_WARMUP;
  if (s.uplinkBandwidth !== undefined) {
    if (!isInt(s.uplinkBandwidth, SWEEP_LIMITS.minBandwidth, Number.MAX_SAFE_INTEGER))
      fail(
        `uplinkBandwidth must be a whole number of bytes per second, at least ${SWEEP_LIMITS.minBandwidth}`,
      );
    out.uplinkBandwidth = s.uplinkBandwidth;
  }
  if (s.uplinkLatencyMs !== undefined) {
    if (!isInt(s.uplinkLatencyMs, 0, SWEEP_LIMITS.maxLatencyMs))
      fail(`uplinkLatencyMs must be 0..${SWEEP_LIMITS.maxLatencyMs}`);
    out.uplinkLatencyMs = s.uplinkLatencyMs;
  }
  if (s.seed !== undefined) {
    if (!isInt(s.seed, 0, 0xffffffff)) fail('seed must be a whole number');
    out.seed = s.seed;
  }
  if (s.relayCommand !== undefined) {
    if (typeof s.relayCommand !== 'string' || s.relayCommand.length > 4096)
      fail('relayCommand must be a command line of at most 4096 characters');
    let words: string[];
    try {
      words = shellWords(s.relayCommand);
    } catch (e) {
      fail(`relayCommand: ${(e as Error).message}`);
    }
    if (words.length === 0) fail('relayCommand is empty');
    if (!modes.includes('fold')) fail('relayCommand applies to fold cases: add fold to the modes');
    out.relayCommand = s.relayCommand;
  }
  return out;
}

/** Sizes as people write them: 262144, 256KiB, 4MiB, 4M, 1.5GiB (binary units). */
export function parseSize(text: string, what: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(k|kib|kb|m|mib|mb|g|gib|gb|b)?$/i.exec(text.trim());
  if (!m) fail(`${what} must be a size such as 262144, 256KiB or 4MiB, got '${text}'`);
  const unit = (m[2] ?? 'b').toLowerCase()[0];
  const mult = unit === 'k' ? 1024 : unit === 'm' ? 1024 ** 2 : unit === 'g' ? 1024 ** 3 : 1;
  const n = Math.round(Number(m[1]) * mult);
  if (!Number.isSafeInteger(n)) fail(`${what} is too large`);
  return n;
}
