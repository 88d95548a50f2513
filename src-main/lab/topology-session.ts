// TopologySession: runs one topology. It starts a cluster for a config,
// paces and checks its rounds (RoundDriver), answers the commands about that
// topology (commands/topology-commands.ts) and streams its events through
// the one coalescer (at most one batch per frame): tap records, link
// counters, round reports, findings. Commands that start topologies of their
// own (compare, reproductions) belong to the lab host (lab-host.ts), which
// is what the window talks to; `relay-lab run` drives a session directly
// (run-topology.ts).
import { randomBytes } from 'node:crypto';
import type { LabBatch, LabEvent, LabFailure, ReplyOf, CommandOf } from '@shared/lab/contract';
import type { Finding, RoundReport } from '@shared/lab/records';
import type { HostView, LinkView, RankState, RankView, SessionSnapshot } from '@shared/lab/state';
import {
  DEFAULT_SNAP_LEN,
  DEFAULT_TOPOLOGY,
  hostName,
  ranksOfHosts,
  type TopologyConfig,
} from '@shared/lab/topology';
import { randomSessionSalt, type SessionSalt } from '@shared/lab/session-salt';
import { resolveTopologyConfig, type ResolvedTopology } from '@shared/lab/topology-config';
import type { ControllerEvent } from '../engine/controller';
import type { RelayEvent } from '../engine/relay';
import type { RankToParent } from '../rank/spec';
import { Cluster, type ClusterConfig, type ExternalRelayEvent } from '../engine/cluster';
import { externalRelayFinding, type ExternalRelayStatus } from './external-relay-notes';
import { RoundDriver, type Fault } from './round-driver';
import { FrameBatcher } from './frame-batcher';
import { dispatch, LabError, type TopologyCommandType } from './commands/handler';
import { TOPOLOGY_HANDLERS } from './commands/topology-commands';
import type { ActionStamp } from '../repro/session-recorder';

export { LabError };

export interface TopologySessionOptions {
  /** Tap snap length (bytes kept per unit); default 64 KiB. A start's config.snapLen wins. */
  snapLen?: number;
  /** How much the tap holds in memory (its records and captured bytes); the recording keeps every unit. */
  tapLimits?: { maxRecords?: number; captureBudget?: number };
  /**
   * Observers beside the round driver (the bench's stage timings): every rank
   * IPC message, relay event and controller event, as the engine emits them.
   */
  observe?: {
    onRankMessage?: (rank: number, msg: RankToParent) => void;
    onRelayEvent?: (host: number, e: RelayEvent) => void;
    onControllerEvent?: (e: ControllerEvent) => void;
  };
  /** An external relay's stdout/stderr line (`relay-lab run` prints it on stderr, prefixed with the host). */
  onExternalRelayLine?: (host: number, stream: 'stdout' | 'stderr', line: string) => void;
}

/** How a topology's rounds ended, read when they end (before the teardown's own exits). */
export interface TopologyOutcome {
  /** Ranks the coordinator or the driver holds dead. */
  dead: number[];
  /** Why the reduce ended early, when it did. */
  ended: { reason: string; error: boolean } | null;
  reports: RoundReport[];
  roundsCompleted: number;
}

const freshSalt = (): SessionSalt => randomSessionSalt((n) => randomBytes(n));

/** Findings a live session keeps (between this and twice this); a headless run keeps all of its own. */
export const LIVE_FINDINGS_KEPT = 1000;

export class TopologySession {
  private cluster: Cluster | null = null;
  private driver: RoundDriver | null = null;
  /** Ranks resumed (SIGCONT) after they were declared dead while paused: out of the reduce till Start. */
  private readonly resumedAfterDeath = new Set<number>();
  private config: TopologyConfig = { ...DEFAULT_TOPOLOGY };
  private salt: SessionSalt | null = null;
  private startedAt = 0;
  private running = false;
  private runDone: Promise<void> | null = null;
  private readonly listeners = new Set<(b: LabBatch) => void>();
  private readonly batcher = new FrameBatcher((batch) => {
    for (const l of this.listeners) l(batch);
  });
  private linkTimer: NodeJS.Timeout | null = null;
  private nextFinding = 1;
  readonly findings: Finding[] = [];
  /** The external relays of the current (or last) topology, with their exit status. */
  readonly externalRelays: ExternalRelayStatus[] = [];
  private busy: Promise<unknown> = Promise.resolve();
  /** Each command's stamp, taken as it runs (Record reads it: stampOf). */
  private readonly stamps = new WeakMap<object, ActionStamp>();

  constructor(private readonly options: TopologySessionOptions = {}) {}

  /** The config's snap length, unless this session captures nothing (snapLen 0: compare, the bench). */
  private snapLenFor(config: TopologyConfig): number | undefined {
    return this.options.snapLen === 0 ? 0 : (config.snapLen ?? this.options.snapLen);
  }

  subscribe(listener: (batch: LabBatch) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Runs one command about this topology; commands run one at a time (a stop never interleaves with a start). */
  async command<T extends TopologyCommandType>(cmd: CommandOf<T>): Promise<ReplyOf<T>> {
    const run = this.busy.then(() => {
      // Taken in the same turn as the command acts (a signal, a fault set): nothing happens between.
      this.stamps.set(cmd, this.actionStamp());
      return dispatch(TOPOLOGY_HANDLERS, this, cmd as CommandOf<TopologyCommandType>);
    });
    this.busy = run.catch(() => {});
    try {
      return (await run) as ReplyOf<T>;
    } catch (e) {
      return failureOf(e);
    }
  }

  /** Where the rounds were when `cmd` ran (undefined for a command this session has not run). */
  stampOf(cmd: object): ActionStamp | undefined {
    return this.stamps.get(cmd);
  }

  /** The round in progress (or next), ms since it started, and the ranks dead right now. */
  actionStamp(): ActionStamp {
    const d = this.driver;
    const c = this.cluster;
    const t = performance.now();
    return {
      round: d?.round ?? 0,
      ...(d?.roundStartedAt != null ? { atMs: t - d.roundStartedAt } : {}),
      ...(d?.judging != null ? { checked: d.checkedOf(d.judging) } : {}),
      t,
      dead: c ? c.hostRanks.flat().filter((r) => c.dead.isDead(r) || d?.rankStates[r] === 'dead') : [],
    };
  }

  /** The running cluster, or NOT_RUNNING (`allowStopped`: a stopped one still holds its tap). */
  requireCluster(allowStopped = false): Cluster {
    if (!this.cluster || (!this.running && !allowStopped))
      throw new LabError('NOT_RUNNING', 'no topology is running (send start first)');
    return this.cluster;
  }

  /** The round driver of the running topology, or NOT_RUNNING. */
  requireRounds(): RoundDriver {
    this.requireCluster();
    return this.driver!;
  }

  /** The cluster of the current (or last) topology: its tap for recordings and catch-up. */
  get activeCluster(): Cluster | null {
    return this.cluster;
  }

  get saltHex(): string {
    return this.salt?.hex ?? '';
  }

  setRoundInterval(ms: number): void {
    this.config.roundIntervalMs = ms;
    if (this.driver) this.driver.intervalMs = ms;
  }

  /**
   * Starts a topology (stopping any running one first). `topology` is a
   * partial config (checked and completed here) or one already resolved at
   * the edge (`relay-lab run`), whose salt is then not parsed again.
   */
  async start(
    topology: Partial<TopologyConfig> | ResolvedTopology,
    extra: Partial<ClusterConfig> = {},
    faults: Fault[] = [],
  ): Promise<void> {
    await this.stop();
    const { config, salt } = isResolved(topology) ? topology : resolveTopologyConfig(topology, freshSalt);
    // The snapshot names the snap length in effect (the window shows it), when units are captured.
    const snapLen = this.snapLenFor(config) ?? DEFAULT_SNAP_LEN;
    this.config = snapLen > 0 ? { ...config, snapLen } : config;
    this.salt = salt;
    this.findings.length = 0;
    this.externalRelays.length = 0;
    (config.relayCommands ?? []).forEach((command, host) => {
      if (command !== null) this.externalRelays.push({ host, command, exit: 'running' });
    });
    this.resumedAfterDeath.clear();
    this.startedAt = Date.now();
    let driver: RoundDriver | null = null;
    // What ranks say before the driver exists (ready, the first gradient prepared) is handed to it then.
    const early: [number, RankToParent][] = [];
    const cluster = await Cluster.start(
      { ...config, salt, tap: { snapLen: this.snapLenFor(config), ...this.options.tapLimits }, ...extra },
      {
        onRankMessage: (r, m) => {
          this.options.observe?.onRankMessage?.(r, m);
          if (driver) driver.onRankMessage(r, m);
          else early.push([r, m]);
        },
        onRankExit: (r, code, sig) => driver?.onRankExit(r, code, sig),
        onRelayEvent: (h, e) => {
          this.options.observe?.onRelayEvent?.(h, e);
          driver?.onRelayEvent(h, e);
        },
        onLog: (level, message) => this.emit({ type: 'log', level, message }),
        onExternalRelay: (h, e) => this.onExternalRelay(h, e),
      },
    );
    this.cluster = cluster;
    const onController = this.options.observe?.onControllerEvent;
    if (onController) cluster.controller.on(onController);
    driver = new RoundDriver(cluster, {
      round: (report) => this.emit({ type: 'round', report }),
      finding: (f) => this.addFinding(f),
      rankState: () => this.emit({ type: 'snapshot', snapshot: this.snapshot() }),
      log: (level, message) => this.emit({ type: 'log', level, message }),
    });
    driver.faults.push(...faults);
    for (const [r, m] of early.splice(0)) driver.onRankMessage(r, m);
    // Ranks that said ready before the driver existed.
    for (let r = 0; r < cluster.world; r++) if (!cluster.ranks[r].exited) driver.setState(r, 'alive');
    this.driver = driver;
    cluster.tap.onRecord((rec) => this.emit({ type: 'records', records: [rec], droppedBefore: 0 }));
    this.running = true;
    this.linkTimer = setInterval(() => this.emit({ type: 'links', links: cluster.tap.linkViews() }), 100);
    this.emit({ type: 'snapshot', snapshot: this.snapshot() });
    this.runDone = driver.run(config.rounds).then(() => {
      if (driver!.ended && !cluster.stopping)
        this.emit({
          type: 'log',
          level: driver!.ended.error ? 'error' : 'info',
          message: `reduce ended: ${driver!.ended.reason}`,
        });
    });
  }

  /** Resolves when the configured rounds are done (or the reduce ended), with how they ended. */
  async finished(): Promise<TopologyOutcome> {
    await this.runDone;
    const c = this.cluster;
    const d = this.driver;
    if (!c || !d) return { dead: [], ended: null, reports: [], roundsCompleted: 0 };
    // A rank killed just before the rounds ended (a strict run stops at once) is dead even if its
    // exit has not been reported yet: wait for those exits, briefly, before reading the dead set.
    const killed = c.ranks.filter((p) => p.killSent && !p.exited);
    if (killed.length > 0)
      await Promise.race([
        Promise.all(killed.map((p) => p.waitExit())),
        new Promise((r) => setTimeout(r, 2000)),
      ]);
    return {
      dead: c.hostRanks.flat().filter((r) => d.rankStates[r] === 'dead' || c.dead.isDead(r)),
      ended: d.ended ? { ...d.ended } : null,
      reports: d.reports,
      roundsCompleted: d.roundsCompleted,
    };
  }

  /** Ends the rounds now (a deadline): finished() resolves; the topology stays up until stop(). */
  endRounds(): void {
    this.driver?.stop();
  }

  async stop(): Promise<void> {
    if (!this.cluster) return;
    this.driver?.stop();
    await this.runDone;
    await this.cluster.stop();
    this.running = false;
    if (this.linkTimer) clearInterval(this.linkTimer);
    this.linkTimer = null;
    this.emit({ type: 'links', links: this.cluster.tap.linkViews() });
    this.emit({ type: 'snapshot', snapshot: this.snapshot() });
    this.batcher.flush();
  }

  /** Every link's counters (after stop: their final values). */
  linkViews(): LinkView[] {
    return this.cluster?.tap.linkViews() ?? [];
  }

  snapshot(): SessionSnapshot {
    const c = this.cluster;
    const hostRanks = ranksOfHosts(this.config.ranksPerHost);
    const d = this.driver;
    const hosts: HostView[] = hostRanks.map((ranks, h) => ({
      host: h,
      name: hostName(h),
      ranks,
      state:
        c?.killedHosts.has(h) || (ranks.length > 0 && ranks.every((r) => d?.rankStates[r] === 'dead'))
          ? 'dead'
          : c?.stopping
            ? 'stopped'
            : 'up',
    }));
    const ranks: RankView[] = hostRanks.flatMap((rs, h) =>
      rs.map((rank) => ({
        rank,
        host: h,
        state: (d?.rankStates[rank] ?? 'starting') as RankState,
        ...(c?.ranks[rank]?.stopped && !c.ranks[rank].exited ? { stopped: true } : {}),
        ...(this.resumedAfterDeath.has(rank) ? { resumedAfterDeath: true } : {}),
        pid: c?.ranks[rank]?.pid,
        roundsCompleted: d?.rankRounds[rank] ?? 0,
      })),
    );
    return {
      running: this.running,
      config: { ...this.config, saltHex: this.saltHex || undefined },
      saltHex: this.saltHex,
      hosts,
      ranks,
      links: c?.tap.linkViews() ?? [],
      round: d?.round ?? 0,
      roundsCompleted: d?.roundsCompleted ?? 0,
      roundsPaused: d?.paused ?? false,
      startedAt: this.startedAt,
    };
  }

  /** A fault a person (or a scheduled fault) applied, as an info finding. */
  recordFault(message: string, ranks: number[]): void {
    this.addFinding({ severity: 'info', kind: 'fault', message, ranks });
  }

  /**
   * A rank resumed after it was declared dead while paused. flodl does not readmit a rank it declared dead
   * (WIRE.md 4.4): the finding says what the user will see.
   */
  noteResumedAfterDeath(rank: number): void {
    this.resumedAfterDeath.add(rank);
    this.addFinding({
      severity: 'info',
      kind: 'dead',
      message:
        `rank ${rank} resumed after it was declared dead while paused: it runs again, but flodl does not ` +
        'readmit it: its relay drops its late frames and sends it no consensus; it stays out of the reduce until Start',
      ranks: [rank],
    });
  }

  /** An external relay's line goes to the log; its misbehaviour becomes a finding naming host and command. */
  private onExternalRelay(h: number, e: ExternalRelayEvent): void {
    const status = this.externalRelays.find((x) => x.host === h);
    if (!status) return;
    if (e.type === 'line') {
      this.emit({
        type: 'log',
        level: e.stream === 'stderr' ? 'warn' : 'info',
        message: `relay ${hostName(h)}: ${e.line}`,
      });
      this.options.onExternalRelayLine?.(h, e.stream, e.line);
      return;
    }
    if (e.type === 'exit') status.exit = e.signal ? `signal ${e.signal}` : `exit code ${e.code}`;
    if (e.type === 'spawnError') status.exit = `spawn failed: ${e.message}`;
    if (e.type === 'stopped') status.stopped = e.how;
    const f = externalRelayFinding(h, status.command, e, ranksOfHosts(this.config.ranksPerHost)[h] ?? []);
    if (f) this.addFinding(f);
  }

  private addFinding(f: Omit<Finding, 'id' | 't'>): void {
    const finding: Finding = {
      id: this.nextFinding++,
      t: this.cluster ? performance.now() - this.cluster.tap.t0 : 0,
      ...f,
    };
    this.findings.push(finding);
    // A live session's findings go to the window and the trace as they happen; a session left
    // running all day (a dead rank stalls a round after round) keeps only the recent ones here.
    if (this.config.rounds === 0 && this.findings.length >= 2 * LIVE_FINDINGS_KEPT)
      this.findings.splice(0, this.findings.length - LIVE_FINDINGS_KEPT);
    this.emit({ type: 'finding', finding });
  }

  /** Queues an event for the listeners (dropped when nobody listens). */
  emit(e: LabEvent): void {
    if (this.listeners.size === 0) return this.batcher.drop();
    this.batcher.push({ events: [e] });
  }
}

function isResolved(t: Partial<TopologyConfig> | ResolvedTopology): t is ResolvedTopology {
  return 'salt' in t && 'config' in t;
}

/** A thrown error as the reply a front end gets: its code when it names one. */
export function failureOf(e: unknown): LabFailure {
  const code =
    e instanceof LabError
      ? e.code
      : e instanceof RangeError
        ? 'BAD_TARGET'
        : typeof (e as { code?: unknown })?.code === 'string'
          ? (e as { code: string }).code
          : 'FAILED';
  return { ok: false, error: code, message: e instanceof Error ? e.message : String(e) };
}
