// Randomized chaos cases from a seed: a topology, mode, policy, dtype, model
// size, round count and a schedule of faults, written as the `relay-lab run`
// arguments that replay it, with what the faults must kill and may kill
// (the dead-set check in ./check.ts). Same seed, same cases.
import { mix32 } from '@shared/synthetic';

export type Mode = 'fold' | 'forward' | 'direct';

export interface ChaosCase {
  /** Index of the case within its soak (case i of seed S is the same on every machine). */
  index: number;
  seed: number;
  ranksPerHost: number[];
  mode: Mode;
  policy: 'elastic' | 'strict';
  dtype: 'f32' | 'bf16';
  modelBytes: number;
  rounds: number;
  /** The `relay-lab run` arguments (without `--json`), the replay of the case. */
  runArgs: string[];
  /** Ranks the schedule must leave dead. */
  mustDie: number[];
  /** Ranks a fault may leave dead (behind a reset or corrupted link, or a fault the strict policy may never reach). */
  mayDie: number[];
  /** True when a fault may end the rounds early (strict policy, a reset or corrupted link). */
  mayEndEarly: boolean;
  /**
   * What the schedule's faults may add to the run (slicing gaps, bandwidth caps, stalls, pauses
   * waited out to the staleness limit), a conservative estimate: never over SCHEDULE_BUDGET_MS.
   */
  scheduleMs: number;
}

/** A small deterministic PRNG (mix32 over a counter): the cases must not depend on Math.random. */
export class Rng {
  private n = 0;
  constructor(private readonly seed: number) {}
  next(): number {
    return mix32(mix32(this.seed >>> 0) ^ Math.imul(++this.n, 0x9e3779b9));
  }
  int(lo: number, hi: number): number {
    return lo + (this.next() % (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.next() % xs.length];
  }
  chance(p: number): boolean {
    return this.next() / 0x1_0000_0000 < p;
  }
}

/** Link faults that slow or slice bytes but lose none: nobody may die of them. */
const GENTLE_SPECS = [
  'latencyMs=5,jitterMs=3',
  'sliceBytes=7,sliceGapMs=1',
  'bandwidth=2000000',
  'stallMs=200',
  'latencyMs=20',
  'clear',
];
/** Link faults that break a connection or a frame: the ranks behind the link may die. */
const BREAKING_SPECS = ['reset', 'corruptNext'];

export const STALENESS_MS = 6000;
/**
 * The committed-read starvation the cases run with (flodl: 60 s, WIRE.md 4.1). A corrupted
 * byte can land in a length or size field (a len prefix arrives as a read of its own): the
 * reader then waits for bytes that never come until starvation presumes the rank gone, and a
 * minute of that would outlast the case. Shortened like the staleness, the case sees it out.
 */
export const STARVATION_MS = 5000;

/**
 * The most a case's schedule may add to its run: well inside the soak's default 60 s run
 * deadline, the rest left for the rounds themselves on a loaded 2-core machine.
 */
export const SCHEDULE_BUDGET_MS = 30_000;
/** The most one sliced link may cost over the whole run; 3 faults at most per case. */
const SLICE_BUDGET_MS = 6_000;
/** What a slice costs beyond its gap (a timer and a socket write, on a loaded machine). */
const SLICE_OVERHEAD_MS = 0.5;
/** The smallest slice, the one that splits every header field across reads. */
const MIN_SLICE_BYTES = 7;
const SLICE_GAP_MS = 1;
/** Framing around a rank's model bytes in one round (len prefix, mux header, RoundFrame, MAC). */
const FRAME_OVERHEAD_BYTES = 128;
/** Control bytes one link carries in a round (Sync, SyncNow, heartbeats): small, bounded generously. */
const CONTROL_BYTES_PER_ROUND = 1024;
/** A paused rank costs the round the staleness limit plus a heartbeat period to notice. */
const PAUSE_COST_MS = STALENESS_MS + 1000;

interface ScheduledFault {
  flag: string;
  value: string;
  round: number;
  /** What this fault may add to the run (see ChaosCase.scheduleMs). */
  costMs: number;
}

/** Bytes one direction of a link carries in a round. */
function linkBytesPerRound(
  channel: 'data' | 'control',
  hostUplink: boolean,
  mode: Mode,
  ranksOnHost: number,
  modelBytes: number,
): number {
  if (channel === 'control') return CONTROL_BYTES_PER_ROUND * (hostUplink ? ranksOnHost : 1);
  const frame = modelBytes + FRAME_OVERHEAD_BYTES;
  // A forward-mode uplink carries every rank's frame; a fold uplink one HostFrame.
  return hostUplink && mode === 'forward' ? ranksOnHost * frame : frame;
}

/**
 * A gentle spec sized to the link: slices grow with the bytes they cut so one sliced link
 * costs at most SLICE_BUDGET_MS (7-byte slices of an 85 KB model over 8 rounds take minutes),
 * and the estimated cost of the chosen spec.
 */
function sizeGentleSpec(
  spec: string,
  bytesPerRound: number,
  roundsAffected: number,
  directions: number,
): { spec: string; costMs: number } {
  const bytes = bytesPerRound * roundsAffected;
  if (spec.startsWith('sliceBytes=')) {
    const perSlice = SLICE_GAP_MS + SLICE_OVERHEAD_MS;
    const sliceBytes = Math.max(
      MIN_SLICE_BYTES,
      Math.ceil((directions * bytes * perSlice) / SLICE_BUDGET_MS),
    );
    const costMs = directions * Math.ceil(bytes / sliceBytes) * perSlice;
    return { spec: `sliceBytes=${sliceBytes},sliceGapMs=${SLICE_GAP_MS}`, costMs };
  }
  const bandwidth = /^bandwidth=(\d+)$/.exec(spec);
  // Up and down are separate lanes: the directions overlap in time.
  if (bandwidth) return { spec, costMs: (bytes * 1000) / Number(bandwidth[1]) };
  const stall = /^stallMs=(\d+)$/.exec(spec);
  if (stall) return { spec, costMs: Number(stall[1]) };
  const latency = /latencyMs=(\d+)(?:,jitterMs=(\d+))?/.exec(spec);
  // Latency delays each message once; a round is a few control and data exchanges.
  if (latency) return { spec, costMs: roundsAffected * 8 * (Number(latency[1]) + Number(latency[2] ?? 0)) };
  return { spec, costMs: 0 };
}

export function generateCase(seed: number, index: number): ChaosCase {
  const rng = new Rng(mix32(seed >>> 0) ^ Math.imul(index + 1, 0x85ebca6b));
  const hosts = rng.int(1, 3);
  const ranksPerHost = Array.from({ length: hosts }, () => rng.int(1, 4));
  const world = ranksPerHost.reduce((a, b) => a + b, 0);
  const hostOf: number[] = ranksPerHost.flatMap((k, h) => Array<number>(k).fill(h));
  const mode = rng.pick(['fold', 'forward', 'direct'] as const);
  const policy = rng.pick(['elastic', 'elastic', 'strict'] as const);
  const dtype = rng.pick(['f32', 'bf16'] as const);
  // 1 KiB .. 256 KiB, log-uniform, a multiple of 4 bytes (whole f32 elements).
  const modelBytes = Math.round(2 ** (10 + (rng.next() % 8193) / 1024) / 4) * 4;
  const rounds = rng.int(3, 8);
  const runSeed = rng.int(1, 1_000_000);

  const mustDie = new Set<number>();
  const mayDie = new Set<number>();
  const faults: ScheduledFault[] = [];
  let mayEndEarly = false;
  // At least one rank must outlive the schedule, or there is no consensus to check.
  const survivorsIf = (dead: Set<number>) => world - dead.size;
  const nFaults = rng.int(0, 3);
  for (let i = 0; i < nFaults; i++) {
    // Round 0 included: a fault before the first consensus is a case too.
    const round = rng.int(0, rounds - 1);
    const kind = rng.pick(['kill-rank', 'pause-rank', 'kill-host', 'link-fault', 'link-fault'] as const);
    if (kind === 'link-fault') {
      const breaking = rng.chance(0.3);
      const picked = breaking ? rng.pick(BREAKING_SPECS) : rng.pick(GENTLE_SPECS);
      const rank = rng.int(0, world - 1);
      const h = hostOf[rank];
      const channel = rng.pick(['data', 'control'] as const);
      const uplink = mode !== 'direct' && rng.chance(0.4);
      const link =
        mode === 'direct'
          ? `r${rank}.uplink.${channel}`
          : uplink
            ? `h${h}.uplink.${channel}`
            : `h${h}.r${rank}.${channel}`;
      const dir = rng.pick(['up', 'down', 'both'] as const);
      // A frame a relay reads from a rank but cannot use (corrupted: its MAC fails) shuts the
      // host's whole data channel down, as flodl's relay does (relay-channel.ts): every rank of
      // the host may die. Elsewhere a broken rank link costs that rank alone (a reset is a read
      // error, a corrupted frame down is the rank's own rejection, the control router forwards
      // unread and the coordinator drops what fails).
      const hostWide =
        uplink || (picked === 'corruptNext' && channel === 'data' && mode !== 'direct' && dir !== 'down');
      const behind = hostWide ? ranksOfHost(hostOf, h) : [rank];
      // The fault lasts from its round to the end of the run (a round in flight included).
      const sized = sizeGentleSpec(
        picked,
        linkBytesPerRound(channel, uplink, mode, uplink ? behind.length : 1, modelBytes),
        rounds - round + 1,
        dir === 'both' ? 2 : 1,
      );
      const spec = sized.spec;
      // A flip in a length field is only seen out when the reader starves (STARVATION_MS).
      if (picked === 'corruptNext') sized.costMs += STARVATION_MS;
      if (breaking) {
        const next = new Set([...mustDie, ...mayDie, ...behind]);
        if (survivorsIf(next) < 1) continue;
        for (const r of behind) mayDie.add(r);
        mayEndEarly = true;
      }
      faults.push({
        flag: '--link-fault',
        value: `${link}@${round}:${dir}:${spec}`,
        round,
        costMs: sized.costMs,
      });
      continue;
    }
    const targets =
      kind === 'kill-host' ? ranksOfHost(hostOf, rng.int(0, hosts - 1)) : [rng.int(0, world - 1)];
    const next = new Set([...mustDie, ...mayDie, ...targets]);
    if (survivorsIf(next) < 1) continue;
    for (const r of targets) mustDie.add(r);
    const target = kind === 'kill-host' ? hostOf[targets[0]] : targets[0];
    faults.push({
      flag: `--${kind}`,
      value: `${target}@${round}`,
      round,
      costMs: kind === 'pause-rank' ? PAUSE_COST_MS : 0,
    });
  }
  // Under the strict policy the first fault ends the reduce (WIRE.md 7.2): a
  // fault scheduled after it may never happen, so its deaths are only possible.
  if (policy === 'strict' && faults.length > 0) {
    mayEndEarly = true;
    const first = Math.min(...faults.map((f) => f.round));
    for (const f of faults) {
      if (f.round === first || f.flag === '--link-fault') continue;
      const targets =
        f.flag === '--kill-host'
          ? ranksOfHost(hostOf, Number(f.value.split('@')[0]))
          : [Number(f.value.split('@')[0])];
      for (const r of targets) {
        mustDie.delete(r);
        mayDie.add(r);
      }
    }
    // A pause at the first fault may end the run before the staleness limit declares it dead.
    for (const f of faults)
      if (f.flag === '--pause-rank') {
        const r = Number(f.value.split('@')[0]);
        mustDie.delete(r);
        mayDie.add(r);
      }
  }
  // A rank that must die is not merely possible.
  for (const r of mustDie) mayDie.delete(r);
  const runArgs = [
    '--topology',
    ranksPerHost.join(','),
    '--mode',
    mode,
    '--policy',
    policy,
    '--dtype',
    dtype,
    '--model-bytes',
    String(modelBytes),
    '--rounds',
    String(rounds),
    '--seed',
    String(runSeed),
    // Twice the default staleness limit: a shared, loaded machine must not turn slow heartbeats into deaths.
    '--staleness-ms',
    String(STALENESS_MS),
    '--starvation-ms',
    String(STARVATION_MS),
    ...faults.flatMap((f) => [f.flag, f.value]),
  ];
  return {
    index,
    seed,
    ranksPerHost,
    mode,
    policy,
    dtype,
    modelBytes,
    rounds,
    runArgs,
    mustDie: [...mustDie].sort((a, b) => a - b),
    mayDie: [...mayDie].sort((a, b) => a - b),
    mayEndEarly,
    scheduleMs: Math.ceil(faults.reduce((ms, f) => ms + f.costMs, 0)),
  };
}

function ranksOfHost(hostOf: number[], host: number): number[] {
  return hostOf.map((h, r) => (h === host ? r : -1)).filter((r) => r >= 0);
}
