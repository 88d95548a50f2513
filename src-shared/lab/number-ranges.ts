// The range of every number a person types: a command-line flag or a field
// of the window. One table and one checker, so `relay-lab run --hosts 40`
// and the New topology form's Hosts field refuse 40 with the same words
// ("Hosts: 40 is outside 1 to 16"), before anything starts. A value outside
// its range is refused, never clamped: past these bounds a run exhausts the
// machine (a billion hosts' tables), overflows a timer (Node turns a delay
// past 2^31-1 ms into 1 ms) or never ends.
import { TOPOLOGY_LIMITS } from './topology-config';
import { BEYOND_LIMITS } from '../model/beyond';

export interface NumberRange {
  /** int: digits only. size: bytes, with an optional unit (64KiB, 4MiB, 1.5GiB). */
  kind: 'int' | 'size';
  min: number;
  max: number;
}

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;
/** The longest delay any fault or deadline takes: 10 minutes, well inside a timer's 2^31-1 ms. */
const MAX_DELAY_MS = 600_000;

const int = (min: number, max: number): NumberRange => ({ kind: 'int', min, max });
const size = (min: number, max: number): NumberRange => ({ kind: 'size', min, max });

export const NUMBER_RANGES = {
  hosts: int(1, TOPOLOGY_LIMITS.maxHosts),
  ranksPerHost: int(1, TOPOLOGY_LIMITS.maxRanksPerHost),
  rounds: int(1, 100_000),
  modelBytes: size(4, TOPOLOGY_LIMITS.maxModelBytes),
  /** The deterministic generator's seed: 32 bits. */
  seed: int(0, 0xffffffff),
  stalenessMs: int(TOPOLOGY_LIMITS.minStalenessMs, TOPOLOGY_LIMITS.maxStalenessMs),
  starvationMs: int(TOPOLOGY_LIMITS.minStarvationMs, TOPOLOGY_LIMITS.maxStarvationMs),
  roundIntervalMs: int(0, TOPOLOGY_LIMITS.maxIntervalMs),
  /** A whole run's deadline: a day at most. */
  timeoutMs: int(1, 86_400_000),
  /** Link fault delays (latencyMs, jitterMs, sliceGapMs, stallMs). */
  faultMs: int(0, MAX_DELAY_MS),
  /** Bytes per second: at least a byte, at most 100 GiB/s. */
  bandwidth: size(1, 100 * GiB),
  sliceBytes: size(1, TOPOLOGY_LIMITS.maxModelBytes),
  port: int(0, 65535),
  worldSize: int(1, 65536),
  rank: int(0, 65535),
  /** Wire protocol versions are u32 on the wire (WIRE.md). */
  version: int(1, 0xffffffff),
  /** Bytes of each unit a trace keeps. */
  snapLen: size(0, GiB),
  /** `relay-lab predict`: a cluster no one machine runs (src-shared/model/beyond.ts). */
  predictHosts: int(...BEYOND_LIMITS.hosts),
  predictRanksPerHost: int(...BEYOND_LIMITS.ranksPerHost),
  predictModelBytes: size(...BEYOND_LIMITS.modelBytes),
  cores: int(...BEYOND_LIMITS.cores),
  /** `relay-lab calibrate`: the buffer its primitives are timed on. */
  calibrateBytes: size(4 * KiB, 256 * MiB),
  /** Bytes of each unit the window's live session keeps (the New topology form's Snap length). */
  sessionSnapLen: int(TOPOLOGY_LIMITS.minSnapLen, TOPOLOGY_LIMITS.maxSnapLen),
  /** The largest frame a reader accepts (OVER_CEILING past it). */
  ceiling: size(1, 4 * GiB),
  /** TCP payload per packet in an exported pcapng (65535 - IPv4 and TCP headers). */
  mss: int(1, 65495),
  /** The tap's stall notice. */
  stallMs: int(1, MAX_DELAY_MS),
  benchRounds: int(1, 1000),
  scaleMaxBytes: size(4 * KiB, TOPOLOGY_LIMITS.maxModelBytes),
  sweepRounds: int(1, 1000),
  warmupRounds: int(0, 100),
  sweepBandwidth: size(1000, 100 * GiB),
  sweepLatencyMs: int(0, 10_000),
  chaosRuns: int(1, 100_000),
  /** A case of a soak (chaos --only): an index below the most runs. */
  chaosCase: int(0, 99_999),
  caseTimeoutMs: int(1000, 3_600_000),
  compareRounds: int(1, 1000),
} as const satisfies Record<string, NumberRange>;

export type RangeName = keyof typeof NUMBER_RANGES;

const UNITS: Record<string, number> = { b: 1, k: KiB, m: MiB, g: GiB };

/** "512 MiB", "4 B", "1000 B": a byte count as a person reads it (exact powers only). */
export function bytesText(n: number): string {
  for (const [unit, k] of [
    ['GiB', GiB],
    ['MiB', MiB],
    ['KiB', KiB],
  ] as const)
    if (n >= k && n % k === 0) return `${n / k} ${unit}`;
  return `${n} B`;
}

/** "1 to 16", "4 B to 512 MiB". */
export function rangeText(r: NumberRange): string {
  return r.kind === 'size' ? `${bytesText(r.min)} to ${bytesText(r.max)}` : `${r.min} to ${r.max}`;
}

function kindText(r: NumberRange): string {
  return r.kind === 'size'
    ? `a size from ${rangeText(r)} (such as 4194304, 64KiB or 4MiB)`
    : `a whole number from ${rangeText(r)}`;
}

/** The text as typed, cut short when long (a pasted megabyte of digits stays one readable line). */
const shown = (t: string): string => (t.length > 40 ? `${t.slice(0, 40)}...` : t);

export type RangeCheck = { ok: true; value: number } | { ok: false; error: string };

/**
 * The number `text` means within `range`, or why not, in one line that names
 * `label` (a flag "--hosts" or a field "Hosts") and the range.
 * `echo` adds the text itself to a "not a number" error (a terminal line has
 * no field beside it to show what was typed).
 */
export function checkNumber(range: NumberRange, text: string, label: string, echo = false): RangeCheck {
  const t = text.trim();
  const junk = (): RangeCheck => ({
    ok: false,
    error: `${label}: ${kindText(range)}${echo ? `, got '${shown(text)}'` : ''}`,
  });
  let n: number;
  if (range.kind === 'int') {
    if (!/^\d+$/.test(t)) return junk();
    n = Number(t);
  } else {
    const m = /^(\d+(?:\.\d+)?)\s*(k|kib|kb|m|mib|mb|g|gib|gb|b)?$/i.exec(t);
    if (!m) return junk();
    n = Math.round(Number(m[1]) * UNITS[(m[2] ?? 'b').toLowerCase()[0]]);
  }
  if (!Number.isFinite(n) || n < range.min || n > range.max)
    return {
      ok: false,
      error: `${label}: ${shown(t)} is outside ${rangeText(range)}`,
    };
  return { ok: true, value: n };
}

/** The same check for a number already parsed (a window control that holds a number). */
export function numberInRange(range: NumberRange, n: number, label: string): RangeCheck {
  if (!Number.isFinite(n) || (range.kind === 'int' && !Number.isInteger(n)) || n < range.min || n > range.max)
    return { ok: false, error: `${label}: ${n} is outside ${rangeText(range)}` };
  return { ok: true, value: n };
}
