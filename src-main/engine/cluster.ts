// A whole miniature cluster on this machine: the controller and coordinator
// on one loopback port (channel-magic dispatch), one relay per host (modes
// fold and forward) and one OS process per rank. It owns every socket and
// process it starts and tears them all down in stop(). Round pacing and
// checking belong to the TopologySession on top.
import { DEFAULT_SAMPLE_MAX } from '../rank/samples';
import type net from 'node:net';
import type { TopologyConfig } from '@shared/lab/topology';
import { hostName, ranksOfHosts, relayCommandOf, worldSize } from '@shared/lab/topology';
import { RELAY_CONTROL_OFFSET, RELAY_DATA_OFFSET } from '@shared/lab/relay-spec';
import { ExternalRelay } from './external-relay';
import { LoopbackTap } from './loopback-tap';
import { deriveFrameCeiling } from '@shared/wire/constants';
import type { Mac } from '@shared/wire/mac';
import type { SessionSalt } from '@shared/lab/session-salt';
import { nodeMac } from '../crypto/node-mac';
import type { RankSpec, RankToParent } from '../rank/spec';
import { closeServer, listen, serverPort } from './conn';
import { Controller } from './controller';
import { Coordinator } from './coordinator';
import { DeadRanks } from './dead-ranks';
import { tuneEngineHeap } from './engine-heap';
import { unitBuffers } from './buffer-pool';
import { PortMux } from './port-mux';
import { RankProcess } from './rank-process';
import { Relay, type RelayEvent } from './relay';
import { modelLayout } from '@shared/synthetic';
import { Tap, type TapOptions } from './tap';
import type { LinkFault } from './link-fault';
import type { RemoteHosts } from '../slurm/remote-hosts';

export interface ClusterConfig extends TopologyConfig {
  /** Parsed once by the lab (src-shared/lab/topology-config.ts); the engine does not re-read the hex. */
  salt: SessionSalt;
  /** Heartbeat cadence of the ranks; default a quarter of the staleness, at most 500 ms. */
  heartbeatMs?: number;
  tap?: TapOptions;
  /** Most consensus elements a rank reports per round to the checker. */
  sampleMax?: number;
  /** How long every rank has to connect and handshake (default 30 s). */
  startTimeoutMs?: number;
  /** Lab-only historical behaviours (WIRE.md 6), to reproduce the transport's incidents. All off by default. */
  historical?: HistoricalBehaviours;
  /**
   * Lab-only, replays of a reproduction file: each round's recorded merge order
   * (RoundReport.mergeOrder), enforced by the relays' folds and the controller's
   * reduce so a replay sums in the same order, bit for bit. Absent: arrival order, as flodl.
   */
  mergeOrders?: (readonly (readonly number[])[] | undefined)[];
  /**
   * Hosts whose relay and ranks run on other nodes (a Slurm job's tasks, src-main/slurm/): the
   * controller listens where they can reach it, and their relays and ranks start through their agents.
   */
  remote?: RemoteHosts;
}

export interface HistoricalBehaviours {
  /** Nagle left on everywhere (no TCP_NODELAY), WIRE.md 6.10. */
  nagle?: boolean;
  /** The relays' upstream queue unbounded, WIRE.md 6.5. */
  unboundedQueue?: boolean;
  /** Pre-fold relay builds sending per-rank Data on the data channel, WIRE.md 6.11. */
  staleRelayBuild?: boolean;
  /** No DeclareDead forwarding from the controller, WIRE.md 6.6. */
  noDeclareDead?: boolean;
  /** A failed scatter write stops the reduce, WIRE.md 6.7. */
  failFastScatter?: boolean;
  /** Idle ranks ship full tensors (no zero-elision), WIRE.md 6.13. */
  noElision?: boolean;
  /** Idle ranks hold NaN in their local state. */
  idleNaN?: boolean;
}

export interface ClusterHooks {
  onRankMessage?: (rank: number, msg: RankToParent) => void;
  onRankExit?: (rank: number, code: number | null, signal: NodeJS.Signals | null) => void;
  onRelayEvent?: (host: number, e: RelayEvent) => void;
  onLog?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** An external relay's output line, exit, or trouble (see ExternalRelayEvent). */
  onExternalRelay?: (host: number, e: ExternalRelayEvent) => void;
}

/** The ranks' heartbeat interval: a quarter of the staleness, 20..500 ms, unless the config names one. */
export function heartbeatMsOf(cfg: { heartbeatMs?: number; stalenessMs: number }): number {
  return cfg.heartbeatMs ?? Math.max(20, Math.min(500, Math.floor(cfg.stalenessMs / 4)));
}

/** What the lab sees of an external relay (host h's relay run as a command). */
export type ExternalRelayEvent =
  | { type: 'line'; stream: 'stdout' | 'stderr'; line: string }
  /** during 'kill': the lab ended it (kill host), it did not leave on its own. */
  | {
      type: 'exit';
      code: number | null;
      signal: NodeJS.Signals | null;
      during: 'start' | 'run' | 'kill' | 'stop';
      /** Its last line on stderr, if any: why it stopped, in its own words. */
      said?: string | null;
    }
  | { type: 'spawnError'; message: string }
  | { type: 'listening'; channel: 'data' | 'control'; afterMs: number }
  | { type: 'dropped'; reason: string }
  | { type: 'stopped'; how: 'exited' | 'terminated' | 'killed' };

/** An external relay that kept the cluster from starting: names the host and the command. */
export class ExternalRelayError extends Error {
  override readonly name = 'ExternalRelayError';
  readonly code = 'EXTERNAL_RELAY';
}

/** A controller port whose + 4 and + 5 are free too (flodl's relay binds them on loopback). */
async function controllerPortWithLoopbackRoom(): Promise<net.Server> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const server = await listen('127.0.0.1', 0);
    const p = serverPort(server);
    if (p + RELAY_CONTROL_OFFSET <= 65535) {
      const probes: net.Server[] = [];
      try {
        for (const off of [RELAY_DATA_OFFSET, RELAY_CONTROL_OFFSET])
          probes.push(await listen('127.0.0.1', p + off));
        for (const pr of probes) await closeServer(pr);
        return server;
      } catch {
        for (const pr of probes) await closeServer(pr);
      }
    }
    await closeServer(server);
  }
  throw new ExternalRelayError('no free controller port with its + 4 and + 5 free for an external relay');
}

/** How long an external relay has to leave by itself once the cluster stops (flodl's relay exits when its ranks and upstream are gone). */
const EXTERNAL_STOP_GRACE_MS = 3000;

export class Cluster {
  readonly tap: Tap;
  readonly dead: DeadRanks;
  readonly mac: Mac;
  readonly world: number;
  readonly hostRanks: number[][];
  readonly ceiling: number;
  controller!: Controller;
  coordinator!: Coordinator;
  readonly relays: (Relay | null)[] = [];
  /** Per host: its external relay (a command), or null where the lab's own relay serves it. */
  readonly external: (ExternalRelay | null)[] = [];
  /** Per external host: its own controller port and mux (flodl's fixed + 4 / + 5 must not collide). */
  private readonly hostPorts = new Map<number, { server: net.Server; mux: PortMux; port: number }>();
  /** Per external host: the taps on its loopback legs (data, control). */
  private readonly loopbackTaps = new Map<number, LoopbackTap[]>();
  /** Per external host: round -> the ranks in the order their frames reached the relay. */
  private readonly observedOrders = new Map<number, Map<number, number[]>>();
  /** Ranks whose DeclareDead the controller has sent to their relay (an external relay drops their later frames). */
  private readonly declaredToRelay = new Set<number>();
  /** Per external host: why the controller last dropped one of its connections. */
  private readonly droppedFrom = new Map<number, string>();
  readonly ranks: RankProcess[] = [];
  private server!: net.Server;
  private mux!: PortMux;
  port = 0;
  private stopped = false;

  private constructor(
    readonly config: ClusterConfig,
    private readonly hooks: ClusterHooks,
  ) {
    this.tap = new Tap(config.tap);
    this.world = worldSize(config.ranksPerHost);
    this.hostRanks = ranksOfHosts(config.ranksPerHost);
    this.dead = new DeadRanks(this.world);
    this.mac = nodeMac(config.salt.bytes);
    this.ceiling = deriveFrameCeiling(modelLayout(config.modelBytes, config.shapes).numel * 4);
  }

  /**
   * The order host h's ranks' round-r frames reached its external relay, those it drops (sent after
   * their rank's DeclareDead) left out (undefined: not an external host).
   */
  observedOrder(h: number, r: number): number[] | undefined {
    return this.observedOrders.get(h)?.get(r);
  }

  /** The command of host h's external relay (null: the lab's own). */
  relayCommand(h: number): string | null {
    return relayCommandOf(this.config, h);
  }

  hostOf(rank: number): number {
    return this.hostRanks.findIndex((rs) => rs.includes(rank));
  }

  static async start(config: ClusterConfig, hooks: ClusterHooks = {}): Promise<Cluster> {
    tuneEngineHeap();
    const c = new Cluster(config, hooks);
    try {
      await c.boot();
    } catch (e) {
      await c.stop();
      throw e;
    }
    return c;
  }

  /** Controller and coordinator on one port, a relay per host, a process per rank; resolves when every rank is in. */
  private async boot(): Promise<void> {
    await this.startControllerPort();
    const ports = await this.startRelays();
    const exitedEarly = this.spawnRanks(ports);
    await this.everyRankIn(exitedEarly);
  }

  /** The controller (data) and the coordinator (control) behind one listening port (channel-magic dispatch). */
  private async startControllerPort(): Promise<void> {
    const cfg = this.config;
    this.controller = new Controller({
      worldSize: this.world,
      mac: this.mac,
      mode: cfg.mode,
      policy: cfg.policy,
      ceiling: this.ceiling,
      dataVersion: cfg.dataVersion,
      dead: this.dead,
      tap: this.tap,
      hostOfRank: (r) => this.hostOf(r),
      mergeOrder: cfg.mergeOrders ? (round) => cfg.mergeOrders?.[round] : undefined,
      starvationMs: cfg.starvationMs,
      historical: {
        noDeclareDead: cfg.historical?.noDeclareDead,
        failFastScatter: cfg.historical?.failFastScatter,
      },
    });
    this.coordinator = new Coordinator({
      worldSize: this.world,
      mac: this.mac,
      controlVersion: cfg.controlVersion,
      indexTable: cfg.controlIndexTable,
      dead: this.dead,
      stalenessMs: cfg.stalenessMs,
      tap: this.tap,
      direct: cfg.mode === 'direct',
      hostOfRank: (r) => this.hostOf(r),
    });
    this.controller.on((e) => {
      if (e.type === 'declareDead') this.declaredToRelay.add(e.rank);
    });
    this.server = await listen(cfg.remote?.controllerListenAddress ?? '127.0.0.1', 0);
    this.port = serverPort(this.server);
    this.mux = new PortMux(this.server, {
      handlers: {
        data: (conn, head) => this.controller.attach(conn, head),
        control: (conn, head) => this.coordinator.attach(conn, head),
      },
      onDrop: (reason) => this.hooks.onLog?.('warn', `port ${this.port}: dropped a connection: ${reason}`),
      noDelay: !cfg.historical?.nagle,
    });
  }

  /** One relay per host (none in direct mode); the ports each host's ranks dial. */
  private async startRelays(): Promise<{ data: number; control: number }[]> {
    const cfg = this.config;
    const ports: { data: number; control: number }[] = [];
    for (let h = 0; h < this.hostRanks.length; h++) {
      if (cfg.mode === 'direct') {
        this.relays.push(null);
        this.external.push(null);
        ports.push({ data: this.port, control: this.port });
        continue;
      }
      const agent = cfg.remote?.agent(h);
      if (agent) {
        // This host's relay runs on its own node and dials the controller across the network.
        agent.onRelayEvent((e) => this.hooks.onRelayEvent?.(h, e));
        this.relays.push(null);
        this.external.push(null);
        ports.push(
          await agent.startRelay(
            {
              hostName: hostName(h),
              ranks: this.hostRanks[h],
              worldSize: this.world,
              mode: cfg.mode === 'forward' ? 'forward' : 'fold',
              controllerAddress: cfg.remote!.controllerAdvertiseAddress,
              controllerPort: this.port,
              dataVersion: cfg.dataVersion,
              controlVersion: cfg.controlVersion,
              ceiling: this.ceiling,
              starvationMs: cfg.starvationMs,
              historical: {
                nagle: cfg.historical?.nagle,
                unboundedQueue: cfg.historical?.unboundedQueue,
                staleBuild: cfg.historical?.staleRelayBuild,
              },
              // Its loopback legs come into this tap through the agent, named as a local host's.
            },
            this.tap,
          ),
        );
        continue;
      }
      const command = relayCommandOf(cfg, h);
      if (command !== null) {
        this.relays.push(null);
        ports.push(await this.startExternalRelay(h, command));
        continue;
      }
      this.external.push(null);
      const relay = await Relay.listen({
        host: h,
        hostName: hostName(h),
        ranks: this.hostRanks[h],
        worldSize: this.world,
        mac: this.mac,
        mode: cfg.mode === 'forward' ? 'forward' : 'fold',
        controllerAddress: '127.0.0.1',
        controllerPort: this.port,
        dataVersion: cfg.dataVersion,
        controlVersion: cfg.controlVersion,
        ceiling: this.ceiling,
        tap: this.tap,
        connectIntervalMs: 100,
        starvationMs: cfg.starvationMs,
        mergeOrder: cfg.mergeOrders
          ? (round) => cfg.mergeOrders?.[round]?.flat().filter((r) => this.hostOf(r) === h)
          : undefined,
        historical: {
          nagle: cfg.historical?.nagle,
          unboundedQueue: cfg.historical?.unboundedQueue,
          staleBuild: cfg.historical?.staleRelayBuild,
        },
      });
      relay.on((e) => this.hooks.onRelayEvent?.(h, e));
      this.relays.push(relay);
      ports.push({ data: relay.dataPort, control: relay.controlPort });
      relay.start().catch((e: Error) => this.hooks.onLog?.('error', `relay ${hostName(h)}: ${e.message}`));
    }
    return ports;
  }

  /**
   * Host h's relay as a command under flodl's launch contract: a controller port of its own
   * (its spec names it), the command started with the spec, and taps on its loopback legs,
   * which the host's ranks dial. Returns the taps' ports.
   */
  private async startExternalRelay(h: number, command: string): Promise<{ data: number; control: number }> {
    const cfg = this.config;
    const name = hostName(h);
    const emit = (e: ExternalRelayEvent) => this.hooks.onExternalRelay?.(h, e);
    const server = await controllerPortWithLoopbackRoom();
    const port = serverPort(server);
    const mux = new PortMux(server, {
      handlers: {
        data: (conn, head) => this.controller.attach(conn, head),
        control: (conn, head) => this.coordinator.attach(conn, head),
      },
      onDrop: (reason) => {
        this.droppedFrom.set(h, reason);
        emit({ type: 'dropped', reason });
      },
      noDelay: !cfg.historical?.nagle,
    });
    this.hostPorts.set(h, { server, mux, port });
    const orders = new Map<number, number[]>();
    this.observedOrders.set(h, orders);
    const taps: LoopbackTap[] = [];
    this.loopbackTaps.set(h, taps);
    const relay = new ExternalRelay(
      command,
      {
        host: name,
        controller_host: '127.0.0.1',
        controller_port: port,
        ranks: this.hostRanks[h],
        salt_hex: cfg.salt.hex,
        world_size: this.world,
        data_channel: true,
        frame_ceiling_bytes: this.ceiling,
      },
      {
        onLine: (stream, line) => emit({ type: 'line', stream, line }),
        onSpawnError: (message) => emit({ type: 'spawnError', message }),
        onExit: (code, signal) =>
          emit({
            type: 'exit',
            code,
            signal,
            said: relay.lastStderrLine,
            during: this.stopped
              ? 'stop'
              : this.killedHosts.has(h)
                ? 'kill'
                : this.controller.ready && this.coordinator.ready
                  ? 'run'
                  : 'start',
          }),
      },
    );
    this.external.push(relay);
    for (const channel of ['data', 'control'] as const) {
      const tap = await LoopbackTap.start({
        host: h,
        hostName: name,
        channel,
        upstreamPort: port + (channel === 'data' ? RELAY_DATA_OFFSET : RELAY_CONTROL_OFFSET),
        mac: this.mac,
        ceiling: this.ceiling,
        controlVersion: cfg.controlVersion,
        indexTable: cfg.controlIndexTable,
        tap: this.tap,
        connectIntervalMs: 100,
        connectAttempts: Math.ceil((cfg.startTimeoutMs ?? 30_000) / 100),
        onFrame: (rank, k) => {
          // A frame that reaches the relay after its rank's DeclareDead is dropped there, not folded
          // (WIRE.md 4.4): a rank resumed after its staleness sends one, and the relay told of its
          // death has folded the round without it.
          if (this.declaredToRelay.has(rank)) return;
          let o = orders.get(k);
          if (!o) orders.set(k, (o = []));
          o.push(rank);
          // A session may run for hours: keep the recent rounds only.
          orders.delete(k - 64);
        },
        onConnected: (afterMs) => emit({ type: 'listening', channel, afterMs }),
        onLog: (level, message) => this.hooks.onLog?.(level, message),
      });
      taps.push(tap);
    }
    return { data: taps[0].port, control: taps[1].port };
  }

  /** Why the external relays kept the cluster from starting, naming each host and command (null: none to blame). */
  private externalStartTrouble(): string | null {
    const out: string[] = [];
    this.external.forEach((relay, h) => {
      if (!relay) return;
      const who = `relay ${hostName(h)} (command '${relay.command}')`;
      const port = this.hostPorts.get(h)?.port ?? 0;
      const taps = this.loopbackTaps.get(h) ?? [];
      const hello = ['data', 'control'].filter((ch) => this.tap.getLink(`${hostName(h)}.uplink.${ch}`));
      if (relay.exited) out.push(`${who} exited during start-up (${relay.describeExit()})`);
      // Ranks dial data first and wait for its ack: a relay that listens reaches the data tap at least.
      else if (taps.every((t) => !t.upstreamSeen))
        out.push(
          `${who} never listened on its loopback ports 127.0.0.1:${port + RELAY_DATA_OFFSET} and ${port + RELAY_CONTROL_OFFSET}`,
        );
      else if (hello.length < 2 && this.droppedFrom.has(h))
        out.push(`${who} sent the controller what it dropped: ${this.droppedFrom.get(h)}`);
      else if (hello.length < 2)
        out.push(
          `${who} never sent Hello to the controller on 127.0.0.1:${port} (${2 - hello.length} channel(s) silent)`,
        );
    });
    return out.length > 0 ? out.join('; ') : null;
  }

  /** Starts every rank process; the promise rejects if one exits before the controller is ready. */
  private spawnRanks(ports: { data: number; control: number }[]): Promise<never> {
    const cfg = this.config;
    const idle = new Set(cfg.idleRanks ?? []);
    const heartbeatMs = heartbeatMsOf(cfg);
    let earlyExit: ((e: Error) => void) | null = null;
    const exitedEarly = new Promise<never>((_, reject) => (earlyExit = reject));
    exitedEarly.catch(() => {});
    for (let h = 0; h < this.hostRanks.length; h++) {
      const agent = cfg.remote?.agent(h);
      for (const rank of this.hostRanks[h]) {
        const spec: RankSpec = {
          rank,
          worldSize: this.world,
          saltHex: cfg.salt.hex,
          // A remote host's ranks dial its relay on their own node; in direct mode, the controller's node.
          address: agent && cfg.mode === 'direct' ? cfg.remote!.controllerAdvertiseAddress : '127.0.0.1',
          dataPort: ports[h].data,
          controlPort: ports[h].control,
          direct: cfg.mode === 'direct',
          dataVersion: cfg.dataVersion,
          controlVersion: cfg.controlVersion,
          controlIndexTable: cfg.controlIndexTable,
          modelBytes: cfg.modelBytes,
          shapes: cfg.shapes,
          dtype: cfg.dtype,
          seed: cfg.seed,
          rounds: 0,
          idle: idle.has(rank),
          paced: true,
          heartbeatMs,
          report: 'ipc',
          sampleMax: cfg.sampleMax ?? DEFAULT_SAMPLE_MAX,
          nagle: cfg.historical?.nagle,
          noElision: cfg.historical?.noElision,
          idleNaN: cfg.historical?.idleNaN,
        };
        this.ranks[rank] = new RankProcess(
          spec,
          {
            onMessage: (m) => this.hooks.onRankMessage?.(rank, m),
            onExit: (code, signal) => {
              if (!this.controller.ready)
                earlyExit?.(
                  new Error(`rank ${rank} exited during start-up (code ${code}, signal ${signal})`),
                );
              this.hooks.onRankExit?.(rank, code, signal);
            },
            onStderr: (line) => this.hooks.onLog?.('warn', `rank ${rank}: ${line}`),
          },
          agent?.spawner,
        );
      }
    }
    for (const [h, relay] of this.external.entries()) {
      if (!relay) continue;
      const fail = () => {
        if (!this.controller.ready || !this.coordinator.ready)
          earlyExit?.(
            new ExternalRelayError(
              `relay ${hostName(h)} (command '${relay.command}') exited during start-up (${relay.describeExit()})` +
                (relay.lastStderrLine ? `: ${relay.lastStderrLine}` : ''),
            ),
          );
      };
      if (relay.exited) fail();
      else void relay.waitExit().then(fail);
    }
    return exitedEarly;
  }

  /** Every rank should be in within seconds; a wedged start fails with a named error instead of hanging. */
  private async everyRankIn(exitedEarly: Promise<never>): Promise<void> {
    const ready = Promise.all([
      new Promise<void>((r) => this.controller.on((e) => e.type === 'ready' && r())),
      new Promise<void>((r) => this.coordinator.on((e) => e.type === 'ready' && r())),
    ]);
    const limitMs = this.config.startTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const missing = this.coordinator.ready
          ? 'the data channel'
          : this.controller.ready
            ? 'the control channel'
            : 'both channels';
        const external = this.externalStartTrouble();
        if (external) reject(new ExternalRelayError(`start-up timed out after ${limitMs} ms: ${external}`));
        else reject(new Error(`start-up timed out after ${limitMs} ms waiting for every rank on ${missing}`));
      }, limitMs);
    });
    try {
      await Promise.race([ready, exitedEarly, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  rank(r: number): RankProcess {
    const p = this.ranks[r];
    if (!p) throw new RangeError(`no rank ${r} (world size ${this.world})`);
    return p;
  }

  /** Applies (or clears, with null) a fault on one link, at the engine's end of its connection(s). */
  setLinkFault(linkId: string, fault: LinkFault | null): void {
    const link = this.tap.getLink(linkId);
    if (!link)
      throw new RangeError(
        `no link '${linkId}' (links: ${this.tap
          .linkViews()
          .map((l) => l.id)
          .join(', ')})`,
      );
    // A remote host's legs are on its own node: the engine holds no end of them to fault.
    if (link.targets.size === 0 && link.info.kind === 'loopback' && this.config.remote?.agent(link.info.host))
      throw new RangeError(
        `link '${linkId}' is a loopback leg on host h${link.info.host}'s own node: faults apply at the engine's end of a link (the uplinks, the legs of hosts on this node)`,
      );
    for (const t of link.targets) t.setFault(fault);
    // A new fault replaces the old one at every end; a one-shot leaves nothing holding.
    link.fault = fault && !fault.corruptNext && !fault.reset ? { ...fault } : null;
  }

  /** Kill host: its relay's sockets are destroyed and its ranks killed (SIGKILL). */
  readonly killedHosts = new Set<number>();

  killHost(h: number): void {
    if (h < 0 || h >= this.hostRanks.length) throw new RangeError(`no host ${h}`);
    this.killedHosts.add(h);
    this.relays[h]?.destroy();
    this.config.remote?.agent(h)?.killHost();
    // An external relay: its whole process group, and the loopback legs the lab holds for it.
    this.external[h]?.kill();
    for (const t of this.loopbackTaps.get(h) ?? []) t.destroy();
    for (const r of this.hostRanks[h]) this.ranks[r]?.signal('SIGKILL');
  }

  get stopping(): boolean {
    return this.stopped;
  }

  /** Tears everything down; every rank process has exited when this resolves. */
  async stop(graceMs = 1500): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    try {
      if (this.coordinator?.ready) this.coordinator.broadcast({ type: 'Shutdown' });
    } catch {
      // best effort
    }
    const exits = Promise.all(this.ranks.filter(Boolean).map((p) => p.waitExit()));
    await Promise.race([exits, new Promise((r) => setTimeout(r, graceMs))]);
    await Promise.all(this.ranks.filter(Boolean).map((p) => p.kill()));
    this.coordinator?.stop();
    await this.controller?.stop('session stopped');
    for (const r of this.relays) await r?.close();
    this.mux?.destroyAll();
    for (const { mux } of this.hostPorts.values()) mux.destroyAll();
    // External relays leave by themselves once their ranks and upstream are gone (flodl's shutdown
    // triggers); one still running after the grace is ended, and said so.
    await Promise.all(
      this.external.map(async (relay, h) => {
        if (!relay) return;
        const how = await relay.stop(EXTERNAL_STOP_GRACE_MS);
        this.hooks.onExternalRelay?.(h, { type: 'stopped', how });
      }),
    );
    for (const taps of this.loopbackTaps.values()) for (const t of taps) await t.close();
    for (const { server } of this.hostPorts.values()) await closeServer(server);
    if (this.server) await closeServer(this.server);
    // The recycled unit buffers were this model's size: the next cluster's may differ.
    unitBuffers.clear();
  }
}
