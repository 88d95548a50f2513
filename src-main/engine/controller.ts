// The controller (data channel, WIRE.md 4.5): accepts relays (or, in the
// lab-only direct mode, ranks), validates Hello, then per round waits for a
// contribution from every connection that still has a live rank, reduces the
// mass-weighted average and scatters one Broadcast per live connection.
// Dead-diff forwarding sends DeclareDead for every newly dead rank to the
// relay that owns it. Loss policy (WIRE.md 7.2): `elastic` declares a lost
// connection's ranks dead and goes on; `strict` shuts the reduce down (flodl's
// code path on relay EOF or on RankExit of a live rank).
import type { LossPolicy, UplinkMode } from '@shared/lab/topology';
import { readU32LE } from '@shared/wire/bytes';
import { expectChannelMagic } from '@shared/wire/channel';
import {
  COMMITTED_READ_STARVATION_MS,
  HANDSHAKE_MAGIC_RANK,
  MUX_MAC_PREFIX_LEN,
  REC_BROADCAST,
  REC_DATA,
  REC_HOST_FRAME,
} from '@shared/wire/constants';
import { isWireError, WireError } from '@shared/wire/errors';
import { encodeLenPrefix } from '@shared/wire/len-frame';
import { tagsEqual, type Mac } from '@shared/wire/mac';
import { encodeMuxRecord, finishMuxRecord, type MuxHeader } from '@shared/wire/mux';
import type { Conn } from './conn';
import type { DeadRanks } from './dead-ranks';
import { FrameCollector, type CollectedFrame } from './frame-collector';
import { BodyBuffer, LenFrameSplitter, MuxSplitter } from './framing';
import { acceptRankHandshake } from './rank-handshake';
import type { Tap } from './tap';
import { encodeRoundFrameSliced, muxHeaderSliced, reduceSliced } from './sliced';
import { UplinkUnits, hostIndexOf } from './uplink-conn';

export interface ControllerOptions {
  worldSize: number;
  mac: Mac;
  mode: UplinkMode;
  policy: LossPolicy;
  ceiling: number;
  dataVersion: number;
  dead: DeadRanks;
  tap?: Tap;
  /** Host of a global rank (link names in direct mode). */
  hostOfRank?: (rank: number) => number;
  helloTimeoutMs?: number;
  pollMs?: number;
  /** Committed-read starvation deadline (WIRE.md 4.1; 60 s in flodl). */
  starvationMs?: number;
  /** Lab-only historical behaviours, for reproducing the transport's incidents (WIRE.md 6). */
  historical?: ControllerHistorical;
}

export interface ControllerHistorical {
  /** No dead-diff forwarding: a wedged rank parks its host's fold forever (WIRE.md 6.6). */
  noDeclareDead?: boolean;
  /** A failed scatter write stops the whole reduce instead of declaring that host dead (WIRE.md 6.7). */
  failFastScatter?: boolean;
}

export type ControllerEvent =
  | { type: 'ready' }
  | {
      type: 'round';
      round: number;
      hosts: number[];
      ranks: number[] | null;
      /** Forward and direct modes: the ranks in the order reduce_realized_work summed their frames. */
      order: number[] | null;
      weight: number;
      ms: number;
      consensusBytes: number;
    }
  | { type: 'error'; message: string; code?: string; host?: number; rank?: number; recordSeq?: number }
  /** recordSeq: the DeclareDead record sent to the relay. */
  | { type: 'declareDead'; rank: number; host: number; recordSeq?: number }
  | { type: 'shutdown'; reason: string; error?: boolean };

interface Source {
  index: number;
  conn: Conn;
  units: UplinkUnits;
  host: number;
  hostName: string;
  ranks: number[];
  direct: boolean;
  /** Contributions for the current round: key -1 = the HostFrame (fold), else the rank. */
  frames: Map<number, CollectedFrame>;
  open: boolean;
  reader?: { checkStarvation(now: number, deadlineMs: number): WireError | null };
}

export class Controller {
  private readonly sources: Source[] = [];
  private readonly covered = new Set<number>();
  private readonly forwarded = new Set<number>();
  private readonly listeners = new Set<(e: ControllerEvent) => void>();
  private nextIndex = 0;
  private isReady = false;
  private stopping: { reason: string; error: boolean } | null = null;
  private wake: (() => void) | null = null;
  private poll: NodeJS.Timeout | null = null;
  private starveTimer: NodeJS.Timeout | null = null;
  round = 0;
  private readonly loopDone: Promise<void>;
  private startLoop!: () => void;

  constructor(readonly opts: ControllerOptions) {
    opts.dead.onDeath(() => this.kick());
    this.loopDone = new Promise<void>((r) => (this.startLoop = r)).then(() => this.loop());
  }

  on(l: (e: ControllerEvent) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  private emit(e: ControllerEvent): void {
    for (const l of this.listeners) l(e);
  }

  get ready(): boolean {
    return this.isReady;
  }

  /** Resolves when the reduce loop has ended (shutdown or error). */
  finished(): Promise<void> {
    return this.loopDone;
  }

  /** A DATA-channel connection from the port mux; `head` starts with the magic. */
  attach(conn: Conn, head: Uint8Array): void {
    const units = new UplinkUnits(this.opts.tap);
    const index = this.nextIndex++;
    const reject = (message: string, code = 'BAD_PAYLOAD') => {
      units.bind(conn, `conn${index}.uplink.data`, `connection ${index}`, 'data', -1);
      this.emit({ type: 'error', message, code });
      conn.destroy();
    };
    if (this.isReady || this.stopping) return reject('connection after every rank was covered');
    try {
      expectChannelMagic(head.subarray(0, 4), 'data');
    } catch (e) {
      return reject((e as Error).message, (e as WireError).code);
    }
    units.record({
      dir: 'up',
      layer: 'channelMagic',
      kind: 'DATA magic',
      length: 4,
      summary: 'channel magic DATA 0xF10D17E1',
      bytes: [head.subarray(0, 4)],
    });
    const rest = head.subarray(4);
    const timer = setTimeout(
      () => reject('no Hello within the Hello read timeout'),
      this.opts.helloTimeoutMs ?? 10_000,
    );
    conn.onClose(() => clearTimeout(timer));
    // Direct mode (lab-only): a rank dials with its data handshake instead of a relay's Hello.
    const decide = (bytes: Uint8Array) => {
      if (bytes.length < 4) return false;
      conn.setConsumer(null);
      if (readU32LE(bytes, 0) === HANDSHAKE_MAGIC_RANK && this.opts.mode === 'direct') {
        conn.unshift(bytes);
        acceptRankHandshake(conn, {
          channel: 'data',
          mac: this.opts.mac,
          version: this.opts.dataVersion,
          worldSize: this.opts.worldSize,
          check: (r) =>
            r >= this.opts.worldSize
              ? `rank ${r} out of range`
              : this.covered.has(r)
                ? `rank ${r} announced twice`
                : null,
          onUnit: (dir, b, verdict, summary, r) => {
            units.bind(conn, `r${r}.uplink.data`, `rank ${r}`, 'data', this.opts.hostOfRank?.(r) ?? -1, r);
            units.record({
              dir,
              layer: 'handshake',
              kind: dir === 'up' ? 'dataHandshake' : 'dataHandshakeAck',
              rank: r,
              length: b.length,
              verdict: verdict as never,
              summary,
              bytes: [b],
            });
          },
        }).then(
          ({ rank, rest: after }) => {
            clearTimeout(timer);
            this.addSource(conn, units, `r${rank}`, this.opts.hostOfRank?.(rank) ?? -1, [rank], true, after);
          },
          (e: Error) => reject(e.message),
        );
        return true;
      }
      this.readHello(conn, units, bytes, index, timer, reject);
      return true;
    };
    let acc = rest;
    if (!decide(acc)) {
      conn.setConsumer((chunk) => {
        acc = Buffer.concat([acc, chunk]);
        decide(acc);
      });
    }
  }

  /** One mux splitter for the connection's life: the first record must be Hello, then the per-connection reader. */
  private readHello(
    conn: Conn,
    units: UplinkUnits,
    first: Uint8Array,
    index: number,
    timer: NodeJS.Timeout,
    reject: (m: string, c?: string) => void,
  ): void {
    let source: Source | null = null;
    let header: MuxHeader | null = null;
    let headerBytes: Uint8Array | null = null;
    let body: BodyBuffer | null = null;
    let collector: FrameCollector | null = null;
    let muxMac: ReturnType<Mac['stream']> | null = null;
    let cap: ReturnType<Tap['capture']> | null = null;
    let dropping = false;
    let innerError: Error | null = null;
    const splitter = new MuxSplitter(this.opts.ceiling, {
      onStart: (h, hb) => {
        header = h;
        headerBytes = hb;
        muxMac = this.opts.mac.stream();
        muxMac.update(hb.subarray(0, MUX_MAC_PREFIX_LEN));
        cap = this.opts.tap?.capture() ?? null;
        cap?.push(hb);
        dropping = false;
        innerError = null;
        collector = null;
        body = null;
        if (source && h.kind === REC_HOST_FRAME) {
          // A connection whose ranks are all dead: its frame is dropped unparsed.
          dropping = source.ranks.every((r) => this.opts.dead.isDead(r));
          if (!dropping) collector = new FrameCollector(this.opts.mac, this.opts.ceiling, h.payloadLen);
        } else {
          body = new BodyBuffer(h.payloadLen);
        }
      },
      onChunk: (b) => {
        muxMac!.update(b);
        cap?.push(b);
        if (collector) {
          // The record's own MAC is judged first (WIRE.md 3.2 step 6): an
          // inner parse error waits until the mux tag has been checked.
          try {
            collector.push(b);
          } catch (e) {
            innerError = e as Error;
            collector = null;
          }
        } else if (body) body.push(b);
      },
      onEnd: () => {
        const tagOk = tagsEqual(muxMac!.finish(), header!.tag);
        const length = headerBytes!.length + header!.payloadLen;
        if (!source) {
          clearTimeout(timer);
          const payload = body!.bytes();
          let rec;
          try {
            rec = finishMuxRecord(headerBytes!, payload, this.opts.mac);
          } catch (e) {
            return reject((e as Error).message, (e as WireError).code);
          }
          if (rec.kind !== 'Control' || rec.msg.type !== 'Hello')
            return reject(
              `first record must be Control(Hello), got ${rec.kind}${rec.kind === 'Control' ? `(${rec.msg.type})` : ''}`,
            );
          const { host: hostName, ranks } = rec.msg;
          const bad = ranks.find((r) => r >= this.opts.worldSize);
          if (bad !== undefined)
            return reject(
              `Hello from ${hostName}: rank ${bad} out of range for world_size ${this.opts.worldSize}`,
            );
          const dup = ranks.find((r, i) => this.covered.has(r) || ranks.indexOf(r) !== i);
          if (dup !== undefined) return reject(`Hello from ${hostName}: rank ${dup} announced twice`);
          const host = hostIndexOf(hostName, index);
          units.bind(conn, `${hostName}.uplink.data`, `relay ${hostName}`, 'data', host);
          units.record({
            dir: 'up',
            layer: 'mux',
            kind: 'Hello',
            length,
            summary: `Hello host=${hostName} ranks=[${ranks}]`,
            bytes: cap ?? undefined,
          });
          const ack = encodeMuxRecord({ kind: 'Control', msg: { type: 'HelloAck' } }, this.opts.mac);
          conn.send(ack);
          units.record({
            dir: 'down',
            layer: 'mux',
            kind: 'HelloAck',
            length: ack.length,
            summary: 'HelloAck',
            bytes: [ack],
          });
          source = this.addSource(conn, units, hostName, host, ranks, false, null);
          source.reader = splitter;
          return;
        }
        const src = source;
        if (!tagOk) throw new WireError('HMAC_MISMATCH', 'mux record HMAC verification failed');
        if (innerError) throw innerError;
        if (header!.kind === REC_HOST_FRAME) {
          if (dropping) {
            units.record({
              dir: 'up',
              layer: 'mux',
              kind: 'HostFrame',
              length,
              summary: `HostFrame from ${src.hostName}: every rank dead, dropped`,
              bytes: cap ?? undefined,
            });
            return;
          }
          const frame = collector!.end();
          const key = this.opts.mode === 'forward' ? header!.rank : -1;
          if (this.opts.mode === 'forward' && !src.ranks.includes(key))
            throw new WireError(
              'BAD_PAYLOAD',
              `forwarded frame for rank ${key}, not one of ${src.hostName}'s ranks`,
            );
          units.record({
            dir: 'up',
            layer: 'mux',
            kind: 'HostFrame',
            rank: key >= 0 ? key : undefined,
            round: this.round,
            length,
            summary: `HostFrame${key >= 0 ? ` r=${key} (forward, lab-only)` : ''} ${frame.tensors.length} tensors w=${frame.weight}`,
            bytes: cap ?? undefined,
          });
          // A second frame before the round is taken overwrites the slot (WIRE.md 4.5).
          src.frames.set(key, frame);
          this.kick();
          return;
        }
        const payload = body!.bytes();
        if (header!.kind === REC_DATA) {
          units.record({
            dir: 'up',
            layer: 'mux',
            kind: 'Data',
            rank: header!.rank,
            length,
            verdict: 'BAD_PAYLOAD',
            summary: 'per-rank Data on the data channel',
            bytes: cap ?? undefined,
          });
          throw new WireError(
            'BAD_PAYLOAD',
            `per-rank Data record for rank ${header!.rank} on the data channel: the relay is expected to fold into a HostFrame (mixed relay/controller builds?)`,
          );
        }
        if (header!.kind === REC_BROADCAST) {
          units.record({
            dir: 'up',
            layer: 'mux',
            kind: 'Broadcast',
            length,
            summary: 'Broadcast from a relay: dropped',
            bytes: cap ?? undefined,
          });
          return;
        }
        const rec = finishMuxRecord(headerBytes!, payload, this.opts.mac);
        if (rec.kind === 'Control' && rec.msg.type === 'RankExit') {
          const rank = rec.msg.rank;
          units.record({
            dir: 'up',
            layer: 'mux',
            kind: 'RankExit',
            rank,
            length,
            summary: `RankExit rank=${rank}`,
            bytes: cap ?? undefined,
          });
          if (!this.opts.dead.isDead(rank) && src.ranks.includes(rank)) {
            if (this.opts.policy === 'strict')
              this.requestShutdown(
                `RankExit of live rank ${rank} (strict policy: clean shutdown of the reduce)`,
              );
            else this.opts.dead.declare(rank, 'exit');
          }
          return;
        }
        units.record({
          dir: 'up',
          layer: 'mux',
          kind: rec.kind === 'Control' ? rec.msg.type : rec.kind,
          length,
          summary: 'unexpected record: dropped',
          bytes: cap ?? undefined,
        });
      },
    });
    conn.setConsumer((chunk) => {
      try {
        splitter.push(chunk);
      } catch (e) {
        const code = isWireError(e) ? e.code : 'BAD_PAYLOAD';
        const seq = units.record({
          dir: 'up',
          layer: 'mux',
          kind: 'rejected',
          length: 0,
          verdict: code as never,
          summary: (e as Error).message,
        });
        if (!source) return reject((e as Error).message, code);
        this.sourceFailed(source, (e as Error).message, code, seq);
      }
    });
    conn.unshift(first);
  }

  private addSource(
    conn: Conn,
    units: UplinkUnits,
    hostName: string,
    host: number,
    ranks: number[],
    direct: boolean,
    rest: Uint8Array | null,
  ): Source {
    const src: Source = {
      index: this.sources.length,
      conn,
      units,
      host,
      hostName,
      ranks: [...ranks],
      direct,
      frames: new Map(),
      open: true,
    };
    this.sources.push(src);
    for (const r of ranks) this.covered.add(r);
    conn.onClose(() => this.sourceClosed(src));
    this.starveTimer ??= setInterval(
      () => this.checkStarvation(),
      Math.min(1000, Math.max(20, (this.opts.starvationMs ?? COMMITTED_READ_STARVATION_MS) / 4)),
    );
    if (direct) this.readDirect(src, rest ?? new Uint8Array(0));
    if (this.covered.size === this.opts.worldSize && !this.isReady) {
      this.isReady = true;
      this.emit({ type: 'ready' });
      this.poll = setInterval(() => this.kick(), this.opts.pollMs ?? 100);
      this.startLoop();
    }
    return src;
  }

  /** Direct mode: the rank's len-framed RoundFrames on its own connection. */
  private readDirect(src: Source, rest: Uint8Array): void {
    const rank = src.ranks[0];
    let collector: FrameCollector | null = null;
    let cap: ReturnType<Tap['capture']> | null = null;
    let len = 0;
    const splitter = new LenFrameSplitter(this.opts.ceiling, {
      onStart: (n) => {
        len = n;
        cap = this.opts.tap?.capture() ?? null;
        cap?.push(encodeLenPrefix(n, this.opts.ceiling));
        collector = new FrameCollector(this.opts.mac, this.opts.ceiling, n);
      },
      onChunk: (b) => {
        cap?.push(b);
        collector!.push(b);
      },
      onEnd: () => {
        const frame = collector!.end();
        src.units.record({
          dir: 'up',
          layer: 'lenframe',
          kind: 'RoundFrame',
          rank,
          round: this.round,
          length: len + 4,
          summary: `RoundFrame from rank ${rank} (direct, lab-only) w=${frame.weight}`,
          bytes: cap ?? undefined,
        });
        if (!this.opts.dead.isDead(rank)) src.frames.set(rank, frame);
        this.kick();
      },
    });
    src.reader = splitter;
    src.conn.setConsumer((chunk) => {
      try {
        splitter.push(chunk);
      } catch (e) {
        const code = isWireError(e) ? e.code : 'BAD_PAYLOAD';
        const seq = src.units.record({
          dir: 'up',
          layer: 'lenframe',
          kind: 'rejected',
          rank,
          length: 0,
          verdict: code as never,
          summary: (e as Error).message,
        });
        this.sourceFailed(src, (e as Error).message, code, seq);
      }
    });
    if (rest.length > 0) src.conn.unshift(rest);
  }

  /** A committed read with no progress past the deadline: the peer is presumed gone (WIRE.md 6.2). */
  private checkStarvation(): void {
    const now = performance.now();
    for (const s of this.sources) {
      if (!s.open || !s.reader) continue;
      const err = s.reader.checkStarvation(now, this.opts.starvationMs ?? COMMITTED_READ_STARVATION_MS);
      if (err) {
        const seq = s.units.record({
          dir: 'up',
          layer: s.direct ? 'lenframe' : 'mux',
          kind: 'starved',
          length: 0,
          verdict: 'STARVED',
          summary: err.message,
        });
        this.sourceFailed(s, err.message, err.code, seq);
      }
    }
  }

  private liveRanks(src: Source): number[] {
    return src.ranks.filter((r) => !this.opts.dead.isDead(r));
  }

  /** A connection's peer is gone: elastic declares its ranks dead, strict shuts the reduce down. */
  private sourceClosed(src: Source): void {
    if (!src.open) return;
    src.open = false;
    if (this.stopping) return;
    const live = this.liveRanks(src);
    if (live.length === 0) return this.kick();
    if (this.opts.policy === 'strict')
      this.requestShutdown(`connection of ${src.hostName} closed with live ranks [${live}] (strict policy)`);
    else for (const r of live) this.opts.dead.declare(r, 'host-lost');
    this.kick();
  }

  private sourceFailed(src: Source, message: string, code: string, recordSeq?: number): void {
    this.emit({ type: 'error', message: `${src.hostName}: ${message}`, code, host: src.host, recordSeq });
    if (this.liveRanks(src).length > 0 && this.opts.policy === 'strict')
      this.requestShutdown(`wire error from ${src.hostName}: ${message}`, true);
    src.conn.destroy();
  }

  private requestShutdown(reason: string, error = false): void {
    if (this.stopping) return;
    this.stopping = { reason, error };
    this.kick();
  }

  /** Stops the reduce loop and closes every connection. */
  stop(reason = 'stopped'): Promise<void> {
    this.requestShutdown(reason);
    for (const s of this.sources) s.conn.destroy();
    if (!this.isReady) this.startLoop();
    return this.loopDone;
  }

  private kick(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  /** Dead-diff forwarding (WIRE.md 4.5): each newly dead rank's DeclareDead goes once to its relay. */
  private forwardDeadDiff(): void {
    if (this.opts.historical?.noDeclareDead) return;
    for (const rank of this.opts.dead.list()) {
      if (this.forwarded.has(rank)) continue;
      this.forwarded.add(rank);
      const src = this.sources.find((s) => s.ranks.includes(rank));
      if (!src || src.direct || !src.open) continue;
      const rec = encodeMuxRecord({ kind: 'Control', msg: { type: 'DeclareDead', rank } }, this.opts.mac);
      src.conn.send(rec);
      const recordSeq = src.units.record({
        dir: 'down',
        layer: 'mux',
        kind: 'DeclareDead',
        rank,
        length: rec.length,
        summary: `DeclareDead rank=${rank}`,
        bytes: [rec],
      });
      this.emit({ type: 'declareDead', rank, host: src.host, recordSeq });
    }
  }

  /** wait_for_round: true when every expected connection has its contribution, false on shutdown. */
  private async waitForRound(): Promise<boolean> {
    for (;;) {
      this.forwardDeadDiff();
      if (this.stopping) return false;
      const expected = this.sources.filter((s) => this.liveRanks(s).length > 0);
      if (expected.length === 0) {
        this.requestShutdown('no connection has a live rank');
        return false;
      }
      const complete = expected.every((s) => this.hasContribution(s));
      if (complete) {
        for (const s of this.sources) if (!expected.includes(s)) s.frames.clear();
        return true;
      }
      await new Promise<void>((r) => (this.wake = r));
    }
  }

  /** Live ranks whose contribution the current round still lacks (in fold mode: every live rank of a host without its HostFrame). */
  waitingFor(): number[] {
    if (this.opts.mode === 'fold')
      return this.sources.filter((s) => !s.frames.has(-1)).flatMap((s) => this.liveRanks(s));
    return this.sources.flatMap((s) => this.liveRanks(s).filter((r) => !s.frames.has(r)));
  }

  private hasContribution(s: Source): boolean {
    if (this.opts.mode === 'fold') return s.frames.has(-1);
    return this.liveRanks(s).every((r) => s.frames.has(r));
  }

  private async loop(): Promise<void> {
    try {
      while (await this.waitForRound()) {
        const t0 = performance.now();
        const accepted = this.sources.filter((s) => this.liveRanks(s).length > 0);
        const frames: CollectedFrame[] = [];
        const ranks: number[] = [];
        // Connection-index order, then rank order within a connection (forward mode).
        for (const s of accepted) {
          for (const k of [...s.frames.keys()].sort((a, b) => a - b)) {
            frames.push(s.frames.get(k)!);
            if (k >= 0) ranks.push(k);
          }
          s.frames.clear();
        }
        // Model-sized work in slices: the event loop keeps serving sockets and timers meanwhile.
        const consensus = await reduceSliced(frames);
        const weight = consensus.weight;
        const { chunks, length } = await encodeRoundFrameSliced(consensus, this.opts.mac);
        const header =
          this.opts.mode === 'direct'
            ? encodeLenPrefix(length, this.opts.ceiling)
            : await muxHeaderSliced(REC_BROADCAST, 0, chunks, this.opts.mac);
        this.scatter([header, ...chunks], length);
        const round = this.round++;
        this.emit({
          type: 'round',
          round,
          hosts: accepted.map((s) => s.host),
          order: this.opts.mode === 'fold' ? null : [...ranks],
          ranks: this.opts.mode === 'fold' ? null : ranks.sort((a, b) => a - b),
          weight,
          ms: performance.now() - t0,
          consensusBytes: length,
        });
      }
    } catch (e) {
      this.stopping ??= { reason: `reduce error: ${(e as Error).message}`, error: true };
      this.emit({ type: 'error', message: (e as Error).message });
    } finally {
      if (this.poll) clearInterval(this.poll);
      if (this.starveTimer) clearInterval(this.starveTimer);
      const s = this.stopping ?? { reason: 'stopped', error: false };
      this.emit({ type: 'shutdown', reason: s.reason, error: s.error });
    }
  }

  /** Elastic scatter: one Broadcast per connection with a live rank; a failed write declares its ranks dead. */
  private scatter(parts: Uint8Array[], length: number): void {
    for (const s of this.sources) {
      const live = this.liveRanks(s);
      if (live.length === 0 || !s.open) continue;
      const ok = s.conn.writer.error === null;
      if (!ok) {
        if (this.opts.historical?.failFastScatter) {
          this.requestShutdown(
            `scatter to ${s.hostName} failed: ${s.conn.writer.error!.message} (fail-fast scatter, historical)`,
            true,
          );
          return;
        }
        for (const r of live) this.opts.dead.declare(r, 'scatter');
        continue;
      }
      s.conn.writer.enqueue(parts);
      s.units.record({
        dir: 'down',
        layer: s.direct ? 'lenframe' : 'mux',
        kind: s.direct ? 'RoundFrame' : 'Broadcast',
        round: this.round,
        length: parts[0].length + length,
        summary: `consensus ${length} B`,
        bytes: parts,
      });
      void s.conn.writer.idle().then(() => {
        if (!s.conn.writer.error) return;
        if (this.opts.historical?.failFastScatter)
          this.requestShutdown(
            `scatter to ${s.hostName} failed: ${s.conn.writer.error.message} (fail-fast scatter, historical)`,
            true,
          );
        else for (const r of this.liveRanks(s)) this.opts.dead.declare(r, 'scatter');
      });
    }
  }
}
