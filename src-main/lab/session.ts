// LabSession: the one object the window (Electron and browser mode) and the
// command line drive. It starts a cluster for a topology, paces and checks
// its rounds, takes commands (kill, pause and resume ranks, kill hosts,
// pause/step rounds, speed) and streams events in batches (at most one batch
// per frame, ~16 ms): tap records, link counters, round reports, findings.
import { randomBytes } from 'node:crypto';
import type {
  LabApi,
  LabBatch,
  LabCommand,
  LabEvent,
  LabReply,
  CompareRow,
  ScenarioResult,
} from '@shared/lab/contract';
import type { Finding, UnitRecord } from '@shared/lab/records';
import type { HostView, RankState, RankView, SessionSnapshot } from '@shared/lab/state';
import { DEFAULT_TOPOLOGY, hostName, ranksOfHosts, type TopologyConfig } from '@shared/lab/topology';
import { bytesToHex } from '@shared/wire/bytes';
import { saltFromHex } from '@shared/wire/salt';
import { Cluster, type ClusterConfig } from '../engine/cluster';
import type { ControllerEvent } from '../engine/controller';
import type { RelayEvent } from '../engine/relay';
import type { RankToParent } from '../rank/spec';
import { RoundDriver, type Fault } from './round-driver';
import { compareModes } from './compare';
import { findScenario, scenarioInfos } from './scenarios/registry';
import { runScenario } from './scenarios/runner';

const BATCH_MS = 16;
const MAX_RECORDS_PER_BATCH = 5000;

export class LabError extends Error {
  override readonly name = 'LabError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface LabSessionOptions {
  /** Tap snap length (bytes kept per unit); default 64 KiB. */
  snapLen?: number;
  /**
   * Observers beside the round driver (the bench's stage timings): every rank
   * IPC message, relay event and controller event, as the engine emits them.
   */
  observe?: {
    onRankMessage?: (rank: number, msg: RankToParent) => void;
    onRelayEvent?: (host: number, e: RelayEvent) => void;
    onControllerEvent?: (e: ControllerEvent) => void;
  };
}

export class LabSession implements LabApi {
  private cluster: Cluster | null = null;
  private driver: RoundDriver | null = null;
  private config: TopologyConfig = { ...DEFAULT_TOPOLOGY };
  private saltHex = '';
  private startedAt = 0;
  private running = false;
  private runDone: Promise<void> | null = null;
  private readonly listeners = new Set<(b: LabBatch) => void>();
  private queue: LabEvent[] = [];
  private records: UnitRecord[] = [];
  private droppedRecords = 0;
  private flushTimer: NodeJS.Timeout | null = null;
  private linkTimer: NodeJS.Timeout | null = null;
  private nextFinding = 1;
  readonly findings: Finding[] = [];
  private busy: Promise<unknown> = Promise.resolve();
  private scenarioRunning = false;

  constructor(private readonly options: LabSessionOptions = {}) {}

  subscribe(listener: (batch: LabBatch) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async command(cmd: LabCommand): Promise<LabReply> {
    // While a reproduction runs (seconds), read-only commands are answered at once instead of queueing behind it.
    if (this.scenarioRunning && (cmd.type === 'snapshot' || cmd.type === 'listScenarios'))
      return this.handle(cmd);
    // Commands run one at a time: a stop never interleaves with a start.
    const run = this.busy.then(() => this.handle(cmd));
    this.busy = run.catch(() => {});
    try {
      return await run;
    } catch (e) {
      const code = e instanceof LabError ? e.code : e instanceof RangeError ? 'BAD_TARGET' : 'FAILED';
      return { ok: false, error: code, message: (e as Error).message };
    }
  }

  private async handle(cmd: LabCommand): Promise<LabReply> {
    switch (cmd.type) {
      case 'start':
        await this.start(cmd.config ?? {});
        return { ok: true, snapshot: this.snapshot() };
      case 'stop':
        await this.stop();
        return { ok: true, snapshot: this.snapshot() };
      case 'snapshot':
        return { ok: true, snapshot: this.snapshot() };
      case 'killRank': {
        const c = this.need();
        this.fault(`kill rank ${cmd.rank} (SIGKILL)`, [cmd.rank]);
        c.rank(cmd.rank).signal('SIGKILL');
        return { ok: true };
      }
      case 'pauseRank': {
        const c = this.need();
        if (c.rank(cmd.rank).signal('SIGSTOP')) this.driver!.setState(cmd.rank, 'paused');
        this.fault(`pause rank ${cmd.rank} (SIGSTOP)`, [cmd.rank]);
        return { ok: true };
      }
      case 'resumeRank': {
        const c = this.need();
        if (c.rank(cmd.rank).signal('SIGCONT')) this.driver!.setState(cmd.rank, 'alive');
        this.fault(`resume rank ${cmd.rank} (SIGCONT)`, [cmd.rank]);
        return { ok: true };
      }
      case 'killHost': {
        const c = this.need();
        this.fault(
          `kill host h${cmd.host}: relay sockets destroyed, ranks killed`,
          c.hostRanks[cmd.host] ?? [],
        );
        c.killHost(cmd.host);
        return { ok: true };
      }
      case 'pauseRounds':
        this.need();
        this.driver!.pause();
        this.push({ type: 'snapshot', snapshot: this.snapshot() });
        return { ok: true };
      case 'resumeRounds':
        this.need();
        this.driver!.resume();
        this.push({ type: 'snapshot', snapshot: this.snapshot() });
        return { ok: true };
      case 'stepRound':
        this.need();
        this.driver!.step();
        return { ok: true };
      case 'setSpeed':
        if (!Number.isFinite(cmd.roundIntervalMs) || cmd.roundIntervalMs < 0)
          throw new LabError('BAD_ARGUMENT', 'roundIntervalMs must be a finite number >= 0');
        this.config.roundIntervalMs = cmd.roundIntervalMs;
        if (this.driver) this.driver.intervalMs = cmd.roundIntervalMs;
        return { ok: true };
      case 'getRecordBytes': {
        const c = this.need(true);
        const got = c.tap.bytesOf(cmd.seq);
        if (!got) throw new LabError('NOT_FOUND', `record ${cmd.seq} is no longer held`);
        return {
          ok: true,
          bytes: {
            seq: cmd.seq,
            hex: bytesToHex(got.bytes),
            length: got.record.length,
            captured: got.bytes.length,
            saltHex: this.saltHex,
          },
        };
      }
      case 'setLinkFault': {
        const c = this.need();
        c.setLinkFault(cmd.link, cmd.fault);
        const what = cmd.fault
          ? Object.entries(cmd.fault)
              .filter(([k, v]) => k !== 'dir' && v !== undefined && v !== false)
              .map(([k, v]) => (v === true ? k : `${k}=${v}`))
              .join(' ')
          : 'cleared';
        this.fault(`link ${cmd.link}${cmd.fault ? ` (${cmd.fault.dir})` : ''}: ${what}`, []);
        return { ok: true };
      }
      case 'listScenarios':
        return { ok: true, scenarios: scenarioInfos() };
      case 'runScenario': {
        const s = findScenario(cmd.name);
        if (!s)
          throw new LabError(
            'NOT_FOUND',
            `no scenario '${cmd.name}' (known: ${scenarioInfos()
              .map((x) => x.name)
              .join(', ')})`,
          );
        // A reproduction starts its own sockets, processes and topologies: the session's topology stops first.
        await this.stop();
        this.scenarioRunning = true;
        let result: ScenarioResult;
        try {
          // The scenario's own topologies stream their events through this session, so the window watches them run.
          result = await runScenario(
            s,
            (phase, message) =>
              this.push({ type: 'log', level: 'info', message: `scenario ${s.name} [${phase}]: ${message}` }),
            (batch) => {
              for (const e of batch.events) this.push(e);
            },
          );
        } finally {
          this.scenarioRunning = false;
        }
        this.push({
          type: 'log',
          level: result.verdict === 'ok' ? 'info' : 'error',
          message: `scenario ${s.name}: verdict ${result.verdict}${result.error ? ` (${result.error})` : ''}`,
        });
        return { ok: true, scenario: result };
      }
      case 'compareModes': {
        const rows: CompareRow[] = await compareModes(
          { ...this.config, ...(cmd.config ?? {}) },
          cmd.rounds ?? 3,
        );
        return { ok: true, compare: rows };
      }
    }
  }

  private need(allowStopped = false): Cluster {
    if (!this.cluster || (!this.running && !allowStopped))
      throw new LabError('NOT_RUNNING', 'no topology is running (send start first)');
    return this.cluster;
  }

  /** Starts a topology (stopping any running one first). */
  async start(
    partial: Partial<TopologyConfig>,
    extra: Partial<ClusterConfig> = {},
    faults: Fault[] = [],
  ): Promise<void> {
    await this.stop();
    const config = validateConfig({ ...DEFAULT_TOPOLOGY, ...partial });
    const saltHex = config.saltHex ?? bytesToHex(randomBytes(16));
    saltFromHex(saltHex);
    this.config = config;
    this.saltHex = saltHex;
    this.findings.length = 0;
    this.records = [];
    this.droppedRecords = 0;
    this.startedAt = Date.now();
    let driver: RoundDriver | null = null;
    const cluster = await Cluster.start(
      { ...config, saltHex, tap: { snapLen: this.options.snapLen }, ...extra },
      {
        onRankMessage: (r, m) => {
          this.options.observe?.onRankMessage?.(r, m);
          driver?.onRankMessage(r, m);
        },
        onRankExit: (r, code, sig) => driver?.onRankExit(r, code, sig),
        onRelayEvent: (h, e) => {
          this.options.observe?.onRelayEvent?.(h, e);
          driver?.onRelayEvent(h, e);
        },
        onLog: (level, message) => this.push({ type: 'log', level, message }),
      },
    );
    this.cluster = cluster;
    const onController = this.options.observe?.onControllerEvent;
    if (onController) cluster.controller.on(onController);
    driver = new RoundDriver(
      cluster,
      {
        round: (report) => this.push({ type: 'round', report }),
        finding: (f) => this.addFinding(f),
        rankState: () => this.push({ type: 'snapshot', snapshot: this.snapshot() }),
        log: (level, message) => this.push({ type: 'log', level, message }),
      },
      Math.max(1000, Math.floor(config.stalenessMs / 2)),
    );
    driver.faults.push(...faults);
    // Ranks that said ready before the driver existed.
    for (let r = 0; r < cluster.world; r++) if (!cluster.ranks[r].exited) driver.setState(r, 'alive');
    this.driver = driver;
    cluster.tap.onRecord((rec) => {
      this.records.push(rec);
      this.scheduleFlush();
    });
    this.running = true;
    this.linkTimer = setInterval(() => this.push({ type: 'links', links: cluster.tap.linkViews() }), 100);
    this.push({ type: 'snapshot', snapshot: this.snapshot() });
    this.runDone = driver.run(config.rounds).then(() => {
      if (driver!.ended && !cluster.stopping)
        this.push({
          type: 'log',
          level: driver!.ended.error ? 'error' : 'info',
          message: `reduce ended: ${driver!.ended.reason}`,
        });
    });
  }

  /** Resolves when the configured rounds are done (or the reduce ended). */
  async finished(): Promise<void> {
    await this.runDone;
  }

  get roundDriver(): RoundDriver | null {
    return this.driver;
  }
  get activeCluster(): Cluster | null {
    return this.cluster;
  }

  async stop(): Promise<void> {
    if (!this.cluster) return;
    this.driver?.stop();
    await this.runDone;
    await this.cluster.stop();
    this.running = false;
    if (this.linkTimer) clearInterval(this.linkTimer);
    this.linkTimer = null;
    this.push({ type: 'links', links: this.cluster.tap.linkViews() });
    this.push({ type: 'snapshot', snapshot: this.snapshot() });
    this.flush();
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
          : 'up',
    }));
    const ranks: RankView[] = hostRanks.flatMap((rs, h) =>
      rs.map((rank) => ({
        rank,
        host: h,
        state: (d?.rankStates[rank] ?? 'starting') as RankState,
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

  private fault(message: string, ranks: number[]): void {
    this.addFinding({ severity: 'info', kind: 'fault', message, ranks });
  }

  private addFinding(f: Omit<Finding, 'id' | 't'>): void {
    const finding: Finding = {
      id: this.nextFinding++,
      t: this.cluster ? performance.now() - this.cluster.tap.t0 : 0,
      ...f,
    };
    this.findings.push(finding);
    this.push({ type: 'finding', finding });
  }

  private push(e: LabEvent): void {
    this.queue.push(e);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushTimer || this.listeners.size === 0) {
      if (this.listeners.size === 0) {
        this.queue = [];
        this.records = [];
      }
      return;
    }
    this.flushTimer = setTimeout(() => this.flush(), BATCH_MS);
  }

  private flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const events = this.queue;
    this.queue = [];
    if (this.records.length > 0) {
      let recs = this.records;
      this.records = [];
      if (recs.length > MAX_RECORDS_PER_BATCH) {
        this.droppedRecords += recs.length - MAX_RECORDS_PER_BATCH;
        recs = recs.slice(recs.length - MAX_RECORDS_PER_BATCH);
      }
      events.unshift({ type: 'records', records: recs, droppedBefore: this.droppedRecords });
    }
    if (events.length === 0) return;
    for (const l of this.listeners) l({ events });
  }
}

export function validateConfig(c: TopologyConfig): TopologyConfig {
  const bad = (m: string) => {
    throw new LabError('BAD_CONFIG', m);
  };
  if (!Array.isArray(c.ranksPerHost) || c.ranksPerHost.length === 0)
    bad('ranksPerHost must list at least one host');
  if (c.ranksPerHost.some((k) => !Number.isInteger(k) || k < 1 || k > 64))
    bad('every host needs 1..64 ranks');
  if (c.ranksPerHost.reduce((a, b) => a + b, 0) > 64) bad('at most 64 ranks in all');
  if (!Number.isInteger(c.modelBytes) || c.modelBytes < 4 || c.modelBytes > 512 * 1024 * 1024)
    bad('modelBytes must be 4 B .. 512 MiB');
  if (c.dtype !== 'f32' && c.dtype !== 'bf16') bad('dtype must be f32 or bf16');
  if (!['fold', 'forward', 'direct'].includes(c.mode)) bad('mode must be fold, forward or direct');
  if (c.policy !== 'elastic' && c.policy !== 'strict') bad('policy must be elastic or strict');
  if (!Number.isInteger(c.rounds) || c.rounds < 0) bad('rounds must be a whole number');
  if (!Number.isInteger(c.seed) || c.seed < 0) bad('seed must be a whole number');
  if (!(c.stalenessMs >= 50)) bad('stalenessMs must be at least 50');
  if (!(c.roundIntervalMs >= 0)) bad('roundIntervalMs must be >= 0');
  if (c.saltHex !== undefined) saltFromHex(c.saltHex);
  if (c.shapes !== undefined) {
    if (!Array.isArray(c.shapes) || c.shapes.length === 0 || c.shapes.length > 1024)
      bad('shapes must list 1..1024 tensors');
    if (
      c.shapes.some((d) => !Array.isArray(d) || d.length > 8 || d.some((x) => !Number.isInteger(x) || x < 1))
    )
      bad('every shape needs up to 8 positive dims');
    const total = c.shapes.reduce((a, d) => a + d.reduce((x, y) => x * y, 1), 0);
    if (total * 4 > 512 * 1024 * 1024) bad('shapes exceed 512 MiB');
  }
  const world = c.ranksPerHost.reduce((a, b) => a + b, 0);
  if (c.idleRanks?.some((r) => !Number.isInteger(r) || r < 0 || r >= world))
    bad('idleRanks must be ranks of the world');
  return c;
}
