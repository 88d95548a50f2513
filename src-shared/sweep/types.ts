// A sweep: every (topology, mode) case of one workload, each run for real on
// its own processes and sockets, one after another. Shared by the runner
// (src-main/sweep), the `relay-lab sweep` command and the Explore view.
import type { UplinkMode, WireDtype } from '../lab/topology';
import type { StageSummary } from '../lab/round-stages';
import type { CasePrediction } from '../model/case-prediction';

export interface SweepSpec {
  /** Ranks per host of each topology, in the order given: [[4],[2,2],[1,1,1,1]]. */
  topologies: number[][];
  modes: UplinkMode[];
  /** Model size per rank at f32 (as TopologyConfig.modelBytes). */
  modelBytes: number;
  dtype: WireDtype;
  rounds: number;
  /**
   * Rounds run first and left out of every figure (default 'auto', spec.ts AUTO_WARMUP): a
   * case's first rounds pay for JIT compilation and cold buffers in every process (3-5x a
   * steady round here), which would otherwise be most of a short case's median.
   */
  warmupRounds?: SweepWarmup;
  /** Each host uplink's rate in bytes per second, each direction, shared by the host's connections. */
  uplinkBandwidth?: number;
  /** One-way latency added to each host uplink, each direction. */
  uplinkLatencyMs?: number;
  seed?: number;
  /**
   * Every host's relay in the fold cases as this command (an external relay under flodl's launch
   * contract, as `run --relay-cmd '*=COMMAND'`); forward and direct cases keep the lab's own.
   */
  relayCommand?: string;
}

/** A count of warm-up rounds, or 'auto': until the lab's JIT is done (spec.ts AUTO_WARMUP). */
export type SweepWarmup = number | 'auto';

/** Bytes per round, one number per host (averaged over the completed rounds). */
export interface PerHostBytes {
  measured: number[];
  theory: number[];
}

export interface SweepCase {
  /** 0-based position in the sweep's order (topology-major, then mode). */
  index: number;
  /** `1x4` for even topologies, `4+2+1` for uneven ones. */
  topology: string;
  ranksPerHost: number[];
  mode: UplinkMode;
  /** forward and direct are lab-only baselines (flodl 0.7 has only fold). */
  labOnly: boolean;
  roundsRequested: number;
  /** Measured rounds completed (warm-up rounds not counted). */
  roundsCompleted: number;
  /** Rounds run before the measured ones, as many as the warm-up took (absent in sweeps saved before warm-up existed: 0). */
  warmupRounds?: number;
  /** Data channel, host -> controller, per host per round: measured and theory (exact, headers included). */
  dataUp: PerHostBytes;
  /** Data channel, controller -> host, per host per round. */
  dataDown: PerHostBytes;
  /** Control channel per host per round (heartbeats and SyncNow: paced by time, so measured only). */
  controlUp: number[];
  controlDown: number[];
  /** Every byte a host's uplink carried toward the controller per round (both channels). */
  uplinkUpPerHost: number[];
  /** What the controller read and wrote per round, all hosts and both channels. */
  controllerIngressPerRound: number;
  controllerEgressPerRound: number;
  roundMs: { median: number; p90: number; each: number[] };
  /**
   * Where a measured round's time goes, stage by stage on its critical path (the bench's
   * breakdown), medians over the measured rounds; absent in sweeps saved before it existed.
   */
  stages?: StageSummary;
  /** The round model's prediction (sweep --predict, and every sweep of the window), docs/model.md. */
  predicted?: CasePrediction;
  /** The round time the shaped uplink alone implies (bytes / rate + latency, up then down); null unshaped. */
  theoryRoundMs: number | null;
  memory: {
    /** Peak resident memory of the engine's process while the case ran (sampled). */
    enginePeakRssBytes: number;
    /** Peak resident memory (VmHWM) of the largest rank process, null where the OS does not say. */
    rankPeakRssBytes: number | null;
  };
  verdicts: { ok: number; mismatch: number; unchecked: number };
  /** The run's verdict (as `run --json`): ok, mismatch, incomplete or error. */
  verdict: string;
  ended: string;
  /** The case's trace file (name in the traces folder, or path from the CLI), when one was recorded. */
  trace?: string;
  /** Set when the case could not run at all. */
  error?: string;
}

export interface SweepResult {
  format: 'relay-lab-sweep';
  version: 1;
  spec: SweepSpec;
  startedAt: string;
  finishedAt: string;
  /** Cases planned (topologies x modes) and whether the sweep ran them all. */
  casesPlanned: number;
  complete: boolean;
  /** Why it ended early (interrupted, cancelled), when it did. */
  stoppedBy?: string;
  cases: SweepCase[];
}

/** Where a running sweep is: `done` of `total` cases, the current one named. */
export interface SweepProgress {
  done: number;
  total: number;
  /** e.g. "2x2 fold", or null between cases and at the end. */
  current: string | null;
  /** The case that just finished, with the event that reports it. */
  finished?: SweepCase;
  state: 'running' | 'done' | 'cancelled' | 'error';
  message?: string;
}
