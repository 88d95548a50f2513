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

interface ScheduledFault {
  flag: string;
  value: string;
  round: number;
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
      const spec = breaking ? rng.pick(BREAKING_SPECS) : rng.pick(GENTLE_SPECS);
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
      const behind = uplink ? ranksOfHost(hostOf, h) : [rank];
      if (breaking) {
        const next = new Set([...mustDie, ...mayDie, ...behind]);
        if (survivorsIf(next) < 1) continue;
        for (const r of behind) mayDie.add(r);
        mayEndEarly = true;
      }
      faults.push({ flag: '--link-fault', value: `${link}@${round}:${dir}:${spec}`, round });
      continue;
    }
    const targets =
      kind === 'kill-host' ? ranksOfHost(hostOf, rng.int(0, hosts - 1)) : [rng.int(0, world - 1)];
    const next = new Set([...mustDie, ...mayDie, ...targets]);
    if (survivorsIf(next) < 1) continue;
    for (const r of targets) mustDie.add(r);
    const target = kind === 'kill-host' ? hostOf[targets[0]] : targets[0];
    faults.push({ flag: `--${kind}`, value: `${target}@${round}`, round });
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
  };
}

function ranksOfHost(hostOf: number[], host: number): number[] {
  return hostOf.map((h, r) => (h === host ? r : -1)).filter((r) => r >= 0);
}
