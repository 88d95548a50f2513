// Rounds of H hosts x K ranks in one mode, measured from the engine's own
// events: each round's duration, the uplink data bytes, the event-loop delay
// of the engine's process, the per-stage breakdown and the peak memory of the
// engine and every rank.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { DEFAULT_TOPOLOGY, type TopologyConfig } from '@shared/lab/topology';
import type { StageSummary } from '@shared/lab/round-stages';
import { runTopology, type RunReport } from '../run-topology';
import type { TopologySession } from '../topology-session';
import { countGc, type GcCount } from './gc-count';
import { sampleTreeMemory, type MemoryPeak } from './memory';
import { StageRecorder, summarizeStages } from './stages';

export interface RoundBench {
  mode: string;
  /** Rounds run first and left out of msPerRound, medianMs and the stages (the lab's own JIT). */
  warmupRounds: number;
  msPerRound: number[];
  medianMs: number;
  uplinkDataBytesPerHostPerRound: number[];
  verdict: RunReport['verdict'];
  /** Where the time goes, per stage (critical path), medians over the rounds. */
  stages: StageSummary;
  memory: MemoryPeak | null;
  /** The engine process's GCs over the measured rounds (warm-up included: GC does not wait for it). */
  engineGc: GcCount & { majorPerRound: number };
}

export async function benchRounds(
  mode: 'fold' | 'direct',
  cfg: Partial<TopologyConfig>,
  maxMs?: number,
  /** Rounds run before `cfg.rounds` and left out of the figures. */
  warmupRounds = 0,
): Promise<{
  round: RoundBench;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  loopDelayWithWarmupP99Ms: number;
  loopDelayWithWarmupMaxMs: number;
}> {
  // The event loop over the measured rounds (`h`), as the round times are; and over the warm-up
  // too (`hAll`), as information: a session's first round fills the buffer pool (fresh 16 MiB
  // buffers, zero-filled by the allocator: 57 to 85 ms of busy loop in a profile) and compiles
  // the round's loops, once per session.
  const h = monitorEventLoopDelay({ resolution: 1 });
  const hAll = monitorEventLoopDelay({ resolution: 1 });
  const stages = new StageRecorder();
  let session: TopologySession | null = null;
  const memory = sampleTreeMemory(100);
  let mem: MemoryPeak | null = null;
  let stopGc: (() => GcCount) | null = null;
  let gc: GcCount | null = null;
  // Measured while rounds run (not during process spawning or teardown).
  const report = await runTopology(
    {
      ...DEFAULT_TOPOLOGY,
      roundIntervalMs: 0,
      ...cfg,
      rounds: (cfg.rounds ?? DEFAULT_TOPOLOGY.rounds) + warmupRounds,
      mode,
    } as TopologyConfig,
    {
      snapLen: 0,
      maxMs,
      observe: stages.observe,
      onSession: (s) => (session = s),
      onRoundsStart: (s) => {
        hAll.enable();
        s.requireRounds().onRoundStart = (r) => {
          if (r === warmupRounds) h.enable();
        };
        stopGc = countGc();
      },
      onRoundsEnd: () => {
        h.disable();
        hAll.disable();
        gc = stopGc?.() ?? null;
        mem = memory.stop();
      },
    },
  ).finally(() => (mem ??= memory.stop()));
  const tap = (session as unknown as TopologySession).activeCluster!.tap;
  const hosts = report.hosts;
  const dataUp = new Array<number>(hosts).fill(0);
  const records = tap.heldRecords;
  for (const r of records) {
    if (r.dir !== 'up' || !r.link.endsWith('uplink.data')) continue;
    if (r.kind === 'HostFrame' || r.kind === 'RoundFrame') dataUp[r.host ?? 0] += r.length;
  }
  const rounds = Math.max(1, report.rounds.length);
  const msPerRound = report.rounds
    .filter((r) => r.round >= warmupRounds)
    .map((r) => Math.round(r.durationMs * 10) / 10);
  return {
    round: {
      mode,
      warmupRounds,
      msPerRound,
      medianMs: median(msPerRound),
      uplinkDataBytesPerHostPerRound: dataUp.map((b) => b / rounds),
      verdict: report.verdict,
      stages: summarizeStages(stages.breakdown(records, tap.t0, warmupRounds)),
      memory: mem,
      engineGc: withPerRound(gc, report.rounds.length),
    },
    loopDelayP99Ms: h.percentile(99) / 1e6,
    loopDelayMaxMs: h.max / 1e6,
    loopDelayWithWarmupP99Ms: hAll.percentile(99) / 1e6,
    loopDelayWithWarmupMaxMs: hAll.max / 1e6,
  };
}

function withPerRound(gc: GcCount | null, rounds: number): RoundBench['engineGc'] {
  const c = gc ?? { major: 0, minor: 0, majorPauseMs: 0, pauseMs: 0 };
  return { ...c, majorPerRound: rounds > 0 ? c.major / rounds : 0 };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
}
