// Live taps as a source for the window: one or more TapProxy (one per host
// uplink and channel, say) feeding one view through the same LabApi events
// the lab's own session sends. All taps share one clock and one record
// sequence; link ids keep them apart. The cluster is known only from what
// crosses: hosts and ranks from the Hellos, links from the connections, and
// rounds from the Broadcasts that end them on each host uplink (their
// verdict is "unchecked": a tap sees no ranks' digests). Records, their
// bytes (a bounded store) and recent rounds are kept for the inspector and
// for a window that (re)connects.
import { performance } from 'node:perf_hooks';
import type {
  AnyCommand,
  LabApi,
  LabBatch,
  LabEvent,
  RecordBytes,
  ReplyOf,
  TapInfo,
  TapSpec,
} from '@shared/lab/contract';
import { MAX_HISTORY_EVENTS } from '@shared/lab/contract';
import type { RoundReport, UnitRecord } from '@shared/lab/records';
import type { HostView, LinkView, RankView, SessionSnapshot } from '@shared/lab/state';
import { DEFAULT_TOPOLOGY, hostName } from '@shared/lab/topology';
import { MAX_TAPS } from '@shared/lab/tap-spec';
import { saltFromHex } from '@shared/wire/salt';
import { nodeMac } from '../crypto/node-mac';
import type { TraceLink } from '../lab/trace/format';
import { hostIndexOfName, unitRecordOf } from './link-naming';
import type { DecodedUnit } from './stream-decoder';
import { TapProxy } from './tap-proxy';

export interface TapFeedOptions {
  /** Bytes of unit contents kept for the inspector, oldest dropped first (default 128 MiB). */
  maxHeldBytes?: number;
  /** Records kept for a (re)connecting window (default 20,000). */
  maxHeldRecords?: number;
  /** How often pending records go out as one batch (default 50 ms, as the session). */
  flushMs?: number;
  snapLen?: number;
}

interface LiveTap {
  info: TapInfo;
  proxy: TapProxy | null;
}

interface Held {
  record: UnitRecord;
  bytes: Uint8Array;
  saltHex: string;
}

export class TapFeed implements LabApi {
  private readonly taps = new Map<number, LiveTap>();
  private nextId = 0;
  private seq = 0;
  private readonly t0 = performance.now();
  readonly startedAt = Date.now();
  private readonly listeners = new Set<(b: LabBatch) => void>();
  private readonly held: Held[] = [];
  private heldBytes = 0;
  private readonly links = new Map<string, LinkView>();
  private readonly hellos = new Map<number, number[]>();
  /** What the taps saw happen to a rank first: a DeclareDead or a RankExit on an uplink (else alive). */
  private readonly rankStates = new Map<number, { state: 'dead' | 'exited'; t: number }>();
  /** Per host: Broadcasts seen on its uplink (the round in flight is this number). */
  private readonly roundOfHost = new Map<number, number>();
  /** Per round: bytes up each host's uplink. */
  private readonly upBytes = new Map<number, Map<number, number>>();
  private roundsCompleted = 0;
  private lastRoundT = 0;
  private history: LabEvent[] = [];
  private pending: LabEvent[] = [];
  private pendingRecords: UnitRecord[] = [];
  private linksChanged = false;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly o: TapFeedOptions = {}) {}

  now(): number {
    return performance.now() - this.t0;
  }

  subscribe(listener: (batch: LabBatch) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  list(): TapInfo[] {
    return [...this.taps.values()].map((t) => ({
      ...t.info,
      connections: t.proxy?.connectionCount ?? 0,
    }));
  }

  /** Starts one tap: listening at once (a taken port rejects with the OS's code, e.g. EADDRINUSE). */
  async start(spec: TapSpec): Promise<TapInfo> {
    if ([...this.taps.values()].filter((t) => t.info.state !== 'stopped').length >= MAX_TAPS)
      throw Object.assign(new Error(`at most ${MAX_TAPS} taps at once`), { code: 'TOO_MANY_TAPS' });
    const id = this.nextId++;
    const info: TapInfo = {
      ...spec,
      id,
      boundPort: 0,
      state: 'listening',
      connections: 0,
      units: 0,
      undecodable: 0,
      gaps: 0,
      bytes: 0,
    };
    const live: LiveTap = { info, proxy: null };
    live.proxy = await TapProxy.start({
      listenHost: spec.listenHost,
      listenPort: spec.listenPort,
      upstreamHost: spec.upstreamHost,
      upstreamPort: spec.upstreamPort,
      mac: nodeMac(saltFromHex(spec.saltHex)),
      name: spec.name,
      snapLen: this.o.snapLen,
      now: () => this.now(),
      onUnit: (link, u) => this.unit(live, link, u),
      onLog: (level, message) => this.log(level, `tap ${id}: ${message}`),
    });
    info.boundPort = live.proxy.port;
    this.taps.set(id, live);
    this.ensureTimer();
    this.log(
      'info',
      `tap ${id} listening on ${spec.listenHost}:${info.boundPort}, upstream ${spec.upstreamHost}:${spec.upstreamPort}`,
    );
    this.pending.push({ type: 'snapshot', snapshot: this.snapshot() });
    return { ...info };
  }

  /**
   * Stops a tap gracefully: its listener closes at once (new connections are
   * refused), connections already open keep being forwarded and decoded
   * until their peers end them, so a running cluster is not cut mid-round.
   */
  async stop(id: number): Promise<void> {
    const t = this.taps.get(id);
    if (!t) throw Object.assign(new Error(`no tap ${id}`), { code: 'NOT_FOUND' });
    if (t.info.state !== 'listening' || !t.proxy) return;
    t.info.state = 'stopping';
    const proxy = t.proxy;
    this.log(
      'info',
      `tap ${id} stopped listening; ${proxy.connectionCount} open connection(s) are forwarded until they end`,
    );
    void proxy.stopListening().then(() => {
      t.info.state = 'stopped';
      t.proxy = null;
      this.log('info', `tap ${id}: its last connection ended`);
    });
  }

  /** Ends every tap now, open connections included (the process is quitting). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.all(
      [...this.taps.values()].map(async (t) => {
        const p = t.proxy;
        t.proxy = null;
        t.info.state = 'stopped';
        await p?.close();
      }),
    );
  }

  async command<C extends AnyCommand>(cmd: C): Promise<ReplyOf<C['type']>> {
    if (cmd.type === 'snapshot') return { ok: true, snapshot: this.snapshot() } as ReplyOf<C['type']>;
    if (cmd.type === 'getRecordBytes') {
      const bytes = this.recordBytes(cmd.seq);
      const first = this.held[0]?.record.seq ?? 0;
      const record = this.held[cmd.seq - first]?.record;
      return (
        bytes
          ? { ok: true, bytes, ...(record ? { record } : {}) }
          : { ok: false, error: 'NOT_FOUND', message: `record ${cmd.seq} is no longer held` }
      ) as ReplyOf<C['type']>;
    }
    return {
      ok: false,
      error: 'TAP_VIEW',
      message: `'${cmd.type}' acts on the lab's own topology; this view shows taps on a cluster the lab did not start (go back to the lab first)`,
    } as ReplyOf<C['type']>;
  }

  recordBytes(seq: number): RecordBytes | null {
    const first = this.held[0]?.record.seq ?? 0;
    const h = this.held[seq - first];
    if (!h || h.record.seq !== seq) return null;
    return {
      seq,
      hex: Buffer.from(h.bytes).toString('hex'),
      length: h.record.length,
      captured: h.bytes.length,
      saltHex: h.saltHex,
    };
  }

  recentRecords(limit: number): UnitRecord[] {
    return this.held.slice(-limit).map((h) => h.record);
  }

  /** Recent rounds and the link counters, for a window that (re)connects or switches to this view. */
  recentHistory(): LabEvent[] {
    return [...this.history, { type: 'links', links: [...this.links.values()].map((l) => ({ ...l })) }];
  }

  snapshot(): SessionSnapshot {
    const hostIds = [...this.hellos.keys()].sort((a, b) => a - b);
    const hostCount = hostIds.length ? hostIds[hostIds.length - 1]! + 1 : 0;
    const hosts: HostView[] = [];
    const ranks: RankView[] = [];
    for (let h = 0; h < hostCount; h++) {
      const rs = this.hellos.get(h) ?? [];
      const states = rs.map((rank) => this.rankStates.get(rank)?.state ?? 'alive');
      // A host whose every rank is gone: dead if any was declared dead, else stopped (all exited).
      const gone = rs.length > 0 && states.every((st) => st !== 'alive');
      hosts.push({
        host: h,
        name: hostName(h),
        ranks: rs,
        state: !gone ? 'up' : states.includes('dead') ? 'dead' : 'stopped',
      });
      rs.forEach((rank, i) =>
        ranks.push({ rank, host: h, state: states[i]!, roundsCompleted: this.roundsCompleted }),
      );
    }
    ranks.sort((a, b) => a.rank - b.rank);
    const first = this.taps.values().next().value;
    return {
      running: [...this.taps.values()].some((t) => t.info.state !== 'stopped'),
      // Only the topology is known from outside; the rest are the lab's defaults, marked by rounds = 0.
      config: { ...DEFAULT_TOPOLOGY, ranksPerHost: hosts.map((h) => h.ranks.length), rounds: 0 },
      saltHex: first?.info.saltHex ?? '',
      hosts,
      ranks,
      links: [...this.links.values()].map((l) => ({ ...l })),
      round: this.roundsCompleted,
      roundsCompleted: this.roundsCompleted,
      roundsPaused: false,
      startedAt: this.startedAt,
    };
  }

  private unit(tap: LiveTap, link: TraceLink, u: DecodedUnit): void {
    const info = tap.info;
    info.units += 1;
    info.bytes += u.verdict === 'gap' ? 0 : u.length;
    if (u.verdict === 'undecodable' || u.verdict === 'stalled') info.undecodable += 1;
    if (u.verdict === 'gap') info.gaps += 1;
    let view = this.links.get(link.id);
    if (!view) {
      view = {
        id: link.id,
        from: link.from,
        to: link.to,
        channel: link.channel,
        kind: link.kind,
        host: link.host,
        bytesUp: 0,
        bytesDown: 0,
        units: 0,
        endpoints: { address: link.serverAddr, clientPort: link.clientPort, serverPort: link.serverPort },
      };
      if (link.rank !== undefined) view.rank = link.rank;
      this.links.set(link.id, view);
      this.pending.push({ type: 'snapshot', snapshot: this.snapshot() });
    }
    if (u.verdict !== 'gap') {
      if (u.dir === 'up') view.bytesUp += u.length;
      else view.bytesDown += u.length;
    }
    view.units += 1;
    this.linksChanged = true;
    if (u.kind === 'Hello' && u.hello && u.verdict === 'ok') {
      const h = hostIndexOfName(u.hello.host);
      if (h >= 0 && this.hellos.get(h)?.join() !== u.hello.ranks.join()) {
        this.hellos.set(h, u.hello.ranks);
        this.pending.push({ type: 'snapshot', snapshot: this.snapshot() });
      }
    }
    if (u.verdict === 'ok' && u.rank !== undefined && (u.kind === 'DeclareDead' || u.kind === 'RankExit'))
      this.noteRankState(u.rank, u.kind === 'DeclareDead' ? 'dead' : 'exited', u.t);
    const record = unitRecordOf(this.seq++, link, u);
    this.countRound(link, u, record);
    this.hold({ record, bytes: u.bytes, saltHex: info.saltHex });
    this.pendingRecords.push(record);
  }

  /**
   * The first of the two by wire time wins: the controller answers a RankExit with a DeclareDead
   * of its own bookkeeping (WIRE.md 4.5, dead-diff forwarding), which is not a death; a rank
   * declared dead that later exits stays dead. The two directions are decoded apart, so arrival
   * order is not time order.
   */
  private noteRankState(rank: number, state: 'dead' | 'exited', t: number): void {
    const was = this.rankStates.get(rank);
    if (was && was.t <= t) return;
    this.rankStates.set(rank, { state, t });
    if (was?.state !== state) this.pending.push({ type: 'snapshot', snapshot: this.snapshot() });
  }

  /** A host uplink's Broadcast ends its round: the first one of a round reports it for every host. */
  private countRound(link: TraceLink, u: DecodedUnit, record: UnitRecord): void {
    if (link.kind !== 'uplink' || link.host < 0) return;
    const h = link.host;
    const round = this.roundOfHost.get(h) ?? 0;
    record.round = round;
    if (u.dir === 'up') {
      const per = this.upBytes.get(round) ?? new Map<number, number>();
      per.set(h, (per.get(h) ?? 0) + u.length);
      this.upBytes.set(round, per);
    }
    if (u.kind !== 'Broadcast' || u.dir !== 'down' || u.verdict !== 'ok') return;
    this.roundOfHost.set(h, round + 1);
    if (round < this.roundsCompleted) return;
    const per = this.upBytes.get(round) ?? new Map<number, number>();
    const hostCount = Math.max(this.hellos.size ? Math.max(...this.hellos.keys()) + 1 : 0, h + 1);
    const report: RoundReport = {
      round,
      // As far as the taps can tell: the ranks of the Hellos not yet declared dead or exited.
      accepted: [...this.hellos.values()]
        .flat()
        .filter((r) => !this.rankStates.has(r))
        .sort((a, b) => a - b),
      verdict: 'unchecked',
      durationMs: Math.max(0, u.t - this.lastRoundT),
      uplinkBytesPerHost: Array.from({ length: hostCount }, (_, i) => per.get(i) ?? 0),
    };
    for (const r of [...this.upBytes.keys()]) if (r <= round - 4) this.upBytes.delete(r);
    this.lastRoundT = u.t;
    this.roundsCompleted = round + 1;
    this.pending.push({ type: 'round', report });
    this.history.push({ type: 'round', report });
    if (this.history.length > MAX_HISTORY_EVENTS)
      this.history.splice(0, this.history.length - MAX_HISTORY_EVENTS);
  }

  private hold(h: Held): void {
    this.held.push(h);
    this.heldBytes += h.bytes.length;
    const maxBytes = this.o.maxHeldBytes ?? 128 * 1024 * 1024;
    const maxRecords = this.o.maxHeldRecords ?? 20_000;
    while (this.held.length > 1 && (this.heldBytes > maxBytes || this.held.length > maxRecords))
      this.heldBytes -= this.held.shift()!.bytes.length;
  }

  private log(level: 'info' | 'warn' | 'error', message: string): void {
    this.pending.push({ type: 'log', level, message });
  }

  private ensureTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.flush(), this.o.flushMs ?? 50);
    this.timer.unref?.();
  }

  /** Sends what arrived since the last flush as one batch (records first, so a round's arrows exist). */
  flush(): void {
    const events: LabEvent[] = [];
    if (this.pendingRecords.length)
      events.push({ type: 'records', records: this.pendingRecords, droppedBefore: 0 });
    this.pendingRecords = [];
    events.push(...this.pending);
    this.pending = [];
    if (this.linksChanged)
      events.push({ type: 'links', links: [...this.links.values()].map((l) => ({ ...l })) });
    this.linksChanged = false;
    if (!events.length) return;
    for (const l of this.listeners) l({ events });
  }
}
