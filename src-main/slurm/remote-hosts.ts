// The engine's side of a Slurm job's host agents (host-agent.ts): it listens
// for them, checks each proves it holds the session salt (and proves it
// back), and gives the cluster what it needs of a host on another node: a
// relay started there, a RankSpawner whose ranks run there, kill host. A
// link that drops mid-run is a host lost: its ranks are reported exited, as
// a node failure looks from the controller. With legs on (the default), the
// host's relay records its loopback legs and the agent sends them here, into
// the job's tap (leg-recorder.ts).
import net from 'node:net';
import type { RelayEvent } from '../engine/relay-options';
import type { Tap } from '../engine/tap';
import type { RankChild, RankChildEvents, RankSpawner } from '../engine/rank-spawner';
import { RANK_SPEC_ENV } from '../rank/spec';
import {
  agentMac,
  engineMac,
  jsonLines,
  line,
  macMatches,
  nonce,
  type AgentToEngine,
  type EngineToAgent,
  type RemoteRelayOptions,
  LEG_QUEUE_BYTES,
  LEG_SNAP_MAX,
} from './agent-protocol';
import { LegRecorder, type LegTotals } from './leg-recorder';

export interface Rendezvous {
  address: string;
  port: number;
  nonce: string;
}

export class HostAgentLink {
  private readonly rankEvents = new Map<number, RankChildEvents>();
  private readonly exited = new Set<number>();
  private relayReply: ((r: { data: number; control: number } | Error) => void) | null = null;
  private readonly relayListeners = new Set<(e: RelayEvent) => void>();
  private legRecorder: LegRecorder | null = null;
  closed = false;

  constructor(
    readonly host: number,
    readonly node: string,
    private readonly socket: net.Socket,
    private readonly onLog: (level: 'info' | 'warn' | 'error', message: string) => void,
    /** Leg bytes the agent may have in flight; null: the legs are not asked for. */
    private readonly legQueueBytes: number | null = LEG_QUEUE_BYTES,
  ) {}

  /** What came of the host's loopback legs (null: not asked for). */
  get legs(): LegTotals | null {
    return this.legRecorder?.totals ?? null;
  }

  private send(m: EngineToAgent): void {
    if (!this.socket.destroyed) this.socket.write(line(m));
  }

  /** An authenticated agent's message (anything malformed is logged and dropped). */
  handle(m: AgentToEngine): void {
    switch (m.type) {
      case 'relayStarted':
        this.relayReply?.({ data: m.data, control: m.control });
        this.relayReply = null;
        break;
      case 'relayFailed':
        this.relayReply?.(new Error(`relay h${this.host} on ${this.node}: ${m.message}`));
        this.relayReply = null;
        break;
      case 'rankMessage':
        this.rankEvents.get(m.rank)?.onMessage(m.msg);
        break;
      case 'rankStderr':
        this.rankEvents.get(m.rank)?.onStderrLine(String(m.line));
        break;
      case 'rankError':
        this.rankEvents.get(m.rank)?.onError(new Error(String(m.message)));
        break;
      case 'rankExit':
        this.rankExit(m.rank, m.code, m.signal);
        break;
      case 'relayEvent': {
        // A record the event points at is the agent tap's; here it is the job tap's, if it came.
        const event =
          typeof m.event === 'object' && m.event !== null && 'recordSeq' in m.event
            ? { ...m.event, recordSeq: this.legRecorder?.seqOf(m.event.recordSeq) }
            : m.event;
        for (const l of this.relayListeners) l(event);
        break;
      }
      case 'log':
        this.onLog(m.level, `h${this.host} (${this.node}): ${m.message}`);
        break;
      case 'legUnits': {
        const received = this.legRecorder?.handle(m);
        if (received !== undefined) this.send({ type: 'legAck', bytes: received });
        break;
      }
      case 'legLink':
      case 'legGap':
      case 'legBytes':
        this.legRecorder?.handle(m);
        break;
    }
  }

  private rankExit(rank: number, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited.has(rank)) return;
    this.exited.add(rank);
    this.rankEvents.get(rank)?.onExit(code, signal);
  }

  /** The link is gone: every rank of the host that had not exited has, as far as the engine can know. */
  lost(): void {
    if (this.closed) return;
    this.closed = true;
    this.relayReply?.(new Error(`host h${this.host}'s agent on ${this.node} went away`));
    this.relayReply = null;
    for (const rank of this.rankEvents.keys()) this.rankExit(rank, null, 'SIGKILL');
  }

  /**
   * Starts the host's relay on the agent's node. With `tap` (the job's) and legs on, the relay
   * records its loopback legs and the agent sends them into `tap`.
   */
  startRelay(
    options: RemoteRelayOptions,
    tap?: Tap,
    timeoutMs = 30_000,
  ): Promise<{ data: number; control: number }> {
    if (this.closed) return Promise.reject(new Error(`host h${this.host}'s agent went away`));
    if (tap && this.legQueueBytes !== null) {
      this.legRecorder = new LegRecorder(this.host, options.ranks, tap, this.onLog);
      options = {
        ...options,
        legs: { snapLen: Math.min(tap.snapLen, LEG_SNAP_MAX), queueBytes: this.legQueueBytes },
      };
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`relay h${this.host} on ${this.node}: no answer in ${timeoutMs} ms`)),
        timeoutMs,
      );
      this.relayReply = (r) => {
        clearTimeout(timer);
        if (r instanceof Error) reject(r);
        else resolve(r);
      };
      this.send({ type: 'startRelay', options });
    });
  }

  onRelayEvent(listener: (e: RelayEvent) => void): () => void {
    this.relayListeners.add(listener);
    return () => this.relayListeners.delete(listener);
  }

  /** Ranks started on the agent's node; the entry path is the agent's own (its node's install). */
  readonly spawner: RankSpawner = (_entry, env, events): RankChild => {
    const spec = env[RANK_SPEC_ENV] ?? '{}';
    const rank = (JSON.parse(spec) as { rank: number }).rank;
    this.rankEvents.set(rank, events);
    if (this.closed) queueMicrotask(() => this.rankExit(rank, null, 'SIGKILL'));
    else this.send({ type: 'spawnRank', rank, spec });
    return {
      // Another node's pid: nothing here may signal or renice it by number.
      pid: undefined,
      signal: (sig) => {
        if (this.closed || this.exited.has(rank)) return false;
        if (sig !== 'SIGSTOP' && sig !== 'SIGCONT' && sig !== 'SIGKILL' && sig !== 'SIGTERM') return false;
        this.send({ type: 'signal', rank, signal: sig });
        return true;
      },
      send: (msg) => this.send({ type: 'send', rank, msg }),
    };
  };

  killHost(): void {
    this.send({ type: 'killHost' });
  }

  /** Asks the agent to end (its ranks and relay with it) and closes the link. */
  shutdown(): void {
    this.closed = true;
    this.send({ type: 'shutdown' });
    this.socket.end();
  }
}

export interface RemoteHostsOptions {
  salt: Uint8Array;
  /** The host indices whose agents must join. */
  hosts: number[];
  /** Where the agents dial: this node's name or address (the rendezvous file says it). */
  advertiseAddress: string;
  /** Where to listen (default all interfaces: agents are on other nodes). */
  listenAddress?: string;
  onLog?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Each remote host's loopback legs into the job's tap (default true). */
  legs?: boolean;
  /** Leg bytes an agent may have in flight before it drops units as a named gap (default LEG_QUEUE_BYTES). */
  legQueueBytes?: number;
}

export class RemoteHosts {
  private readonly links = new Map<number, HostAgentLink>();
  private readonly joined: ((h: number) => void)[] = [];
  private server!: net.Server;
  private readonly nonce = nonce();
  private readonly onLog: NonNullable<RemoteHostsOptions['onLog']>;

  private constructor(private readonly opts: RemoteHostsOptions) {
    this.onLog = opts.onLog ?? (() => {});
  }

  static async listen(opts: RemoteHostsOptions): Promise<RemoteHosts> {
    const r = new RemoteHosts(opts);
    r.server = net.createServer((s) => r.accept(s));
    await new Promise<void>((resolve, reject) => {
      r.server.once('error', reject);
      r.server.listen(0, opts.listenAddress ?? '0.0.0.0', () => resolve());
    });
    return r;
  }

  rendezvous(): Rendezvous {
    return {
      address: this.opts.advertiseAddress,
      port: (this.server.address() as net.AddressInfo).port,
      nonce: this.nonce,
    };
  }

  private accept(socket: net.Socket): void {
    socket.setNoDelay(true);
    let link: HostAgentLink | null = null;
    // An unauthenticated peer gets 10 s to say hello, then is dropped.
    const hello = setTimeout(() => socket.destroy(), 10_000);
    const drop = (why: string) => {
      this.onLog('warn', `host agents: dropped a connection from ${socket.remoteAddress}: ${why}`);
      socket.destroy();
    };
    socket.on(
      'data',
      jsonLines(
        (raw) => {
          const m = raw as AgentToEngine;
          if (link) return link.handle(m);
          if (m.type !== 'hello' || !Number.isInteger(m.host) || typeof m.nonce !== 'string')
            return drop('no hello');
          if (!this.opts.hosts.includes(m.host)) return drop(`host ${m.host} is not one of this job's`);
          if (!macMatches(agentMac(this.opts.salt, m.host, this.nonce), m.mac))
            return drop(`h${m.host}: the agent does not hold the session salt`);
          if (this.links.has(m.host)) return drop(`h${m.host} joined twice`);
          clearTimeout(hello);
          link = new HostAgentLink(
            m.host,
            String(m.node ?? '?'),
            socket,
            this.onLog,
            this.opts.legs === false ? null : (this.opts.legQueueBytes ?? LEG_QUEUE_BYTES),
          );
          this.links.set(m.host, link);
          socket.write(line({ type: 'welcome', mac: engineMac(this.opts.salt, m.host, m.nonce) }));
          this.onLog('info', `host h${m.host} joined from ${link.node}`);
          for (const j of this.joined) j(m.host);
        },
        (e) => drop(e.message),
      ),
    );
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(hello);
      if (link) {
        if (!link.closed) this.onLog('error', `host h${link.host}'s agent on ${link.node} went away`);
        link.lost();
      }
    });
  }

  /** Resolves when every expected host's agent has joined; a named error after timeoutMs. */
  async waitAll(timeoutMs: number): Promise<void> {
    const missing = () => this.opts.hosts.filter((h) => !this.links.has(h));
    if (missing().length === 0) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `AGENTS_MISSING: host agent(s) ${missing()
                .map((h) => `h${h}`)
                .join(', ')} did not join within ${timeoutMs} ms`,
            ),
          ),
        timeoutMs,
      );
      this.joined.push(() => {
        if (missing().length === 0) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  }

  /** Where the controller listens: where the agents' relays can reach it. */
  get controllerListenAddress(): string {
    return this.opts.listenAddress ?? '0.0.0.0';
  }

  /** The address the remote relays (and direct-mode ranks) dial the controller at. */
  get controllerAdvertiseAddress(): string {
    return this.opts.advertiseAddress;
  }

  agent(host: number): HostAgentLink | undefined {
    return this.links.get(host);
  }

  has(host: number): boolean {
    return this.opts.hosts.includes(host);
  }

  /** Ends every agent (their ranks and relays with them) and stops listening. */
  async close(): Promise<void> {
    for (const l of this.links.values()) l.shutdown();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
