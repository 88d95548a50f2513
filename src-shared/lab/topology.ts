// What a lab session runs: the topology and its knobs. Shared by the engine,
// the command line and the window.
import { DEFAULT_CONTROL_INDEX_TABLE, type ControlIndexTable } from '../wire/control-msg-tables';

export type { ControlIndexTable };

/** fold = flodl 0.7's relay; forward and direct are lab-only baselines (WIRE.md 7.5). */
export type UplinkMode = 'fold' | 'forward' | 'direct';
/** WIRE.md 7.2: elastic declares a lost host's ranks dead and goes on; strict shuts the reduce down. */
export type LossPolicy = 'elastic' | 'strict';
export type WireDtype = 'f32' | 'bf16';

export const LAB_ONLY_MODES: ReadonlySet<UplinkMode> = new Set(['forward', 'direct']);

export interface TopologyConfig {
  /** Ranks per host, host by host: [4, 4] is 2 hosts x 4 ranks. Global ranks are numbered host by host. */
  ranksPerHost: number[];
  /** Model size per rank in bytes, at f32 (4 bytes per element). */
  modelBytes: number;
  /** Wire dtype of Model frames. */
  dtype: WireDtype;
  mode: UplinkMode;
  policy: LossPolicy;
  /** 32 lowercase hex chars; generated from a CSPRNG per session when absent. */
  saltHex?: string;
  seed: number;
  /** Rounds to run; 0 means until stopped. */
  rounds: number;
  /** Pause between rounds, for a watchable pace (0 = as fast as possible). */
  roundIntervalMs: number;
  /**
   * Heartbeat staleness after which the coordinator declares a rank dead.
   * Default 30 s, flodl's own: 3 s lost ranks of the default topology on a
   * loaded 2-core machine. A killed rank is known at once from its exit (and
   * its relay's RankExit), a paused one shows "paused" at once; only a silent,
   * connected rank waits for the staleness.
   */
  stalenessMs: number;
  /**
   * Committed-read starvation: a reader that has begun a frame and gets no byte for this long
   * presumes its peer gone (WIRE.md 4.1), on the relays' rank and upstream readers and the
   * controller's. Absent: flodl's fixed 60 s. Only time-compressed runs shorten it (the chaos
   * soak, where a flipped length field otherwise holds a fold barrier for a minute).
   */
  starvationMs?: number;
  controlVersion: number;
  /**
   * The ControlMsgWire / TimingMsgWire variant indices the session speaks (WIRE.md 3.5): flodl
   * inserted variants without a version bump, so the version alone does not fix them. 'v2'
   * (default): ControlMsgWire 0-15, Heartbeat = 4; 'v2-late': SaveConsensusModel = 16,
   * CoordHeartbeat = 17, Intent = 4, Heartbeat = 5. Every role that encodes or decodes a control
   * message, and every reader of a trace, uses it. Traces and reproduction files without it are 'v2'.
   */
  controlIndexTable: ControlIndexTable;
  dataVersion: number;
  /** Tensor shapes of the model (their element counts replace modelBytes / 4); absent: derived from modelBytes. */
  shapes?: number[][];
  /** Ranks that ship mass 0 with elided tensors every round (an idle rank cannot poison the consensus). */
  idleRanks?: number[];
  /**
   * Snap length: the bytes the tap keeps of each unit (Wireshark's -s). A longer unit is
   * "captured short": its verdict is still the engine's, on the whole unit. Absent: 64 KiB.
   */
  snapLen?: number;
  /**
   * Per host: the command line that starts its relay under flodl's launch contract (an external
   * relay: a flodl build, or any program reading FLODL_INTERNAL_RELAY_JSON; run without a shell),
   * or null / absent for Relay Lab's own relay. Fold mode only.
   */
  relayCommands?: (string | null)[];
}

/** The command of host h's external relay, or null when the lab's own relay serves it. */
export function relayCommandOf(config: Pick<TopologyConfig, 'relayCommands'>, host: number): string | null {
  return config.relayCommands?.[host] ?? null;
}

/** The tap's snap length unless a config says otherwise: a 64 KiB unit is kept whole. */
export const DEFAULT_SNAP_LEN = 64 * 1024;

export const DEFAULT_TOPOLOGY: TopologyConfig = {
  ranksPerHost: [4, 4],
  modelBytes: 4 * 1024 * 1024,
  dtype: 'f32',
  mode: 'fold',
  policy: 'elastic',
  seed: 1,
  rounds: 0,
  roundIntervalMs: 250,
  stalenessMs: 30_000,
  controlVersion: 2,
  controlIndexTable: DEFAULT_CONTROL_INDEX_TABLE,
  dataVersion: 3,
};

export function hostName(host: number): string {
  return `h${host}`;
}

/** Global rank numbers of each host: host h holds a contiguous block, host 0 first. */
export function ranksOfHosts(ranksPerHost: readonly number[]): number[][] {
  const out: number[][] = [];
  let next = 0;
  for (const k of ranksPerHost) {
    out.push(Array.from({ length: k }, (_, i) => next + i));
    next += k;
  }
  return out;
}

/**
 * False for a config with no hosts: the trace of one connection a
 * reproduction drove directly (no cluster), or a capture before any Hello.
 * Its mode, policy and model size are then the lab's defaults, not facts
 * about the trace, and must not be shown as its topology.
 */
export function hasTopology(config: Pick<TopologyConfig, 'ranksPerHost'>): boolean {
  return config.ranksPerHost.length > 0;
}

export function worldSize(ranksPerHost: readonly number[]): number {
  return ranksPerHost.reduce((a, b) => a + b, 0);
}
