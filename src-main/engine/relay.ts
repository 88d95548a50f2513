// A per-host relay (WIRE.md 4.2-4.4, 4.7): loopback listeners for the host's
// ranks, their handshakes, one upstream connection per channel (channel magic,
// Hello, HelloAck). The control channel is a pure byte router; the data
// channel folds the host's rank frames chunk by chunk into one HostFrame per
// round (mode `fold`, flodl 0.7) or, in the lab-only `forward` mode, sends
// each rank frame upstream as its own record and lets the controller fold.
// Single writers: the outbound queue is the sole writer upstream; the
// upstream reader is the sole writer of every rank socket.
import type net from 'node:net';
import type { Direction } from '@shared/lab/state';
import { encodeChannelMagic } from '@shared/wire/channel';
import {
  COMMITTED_READ_STARVATION_MS,
  MUX_MAC_PREFIX_LEN,
  REC_BROADCAST,
  REC_DATA,
  REC_HOST_FRAME,
} from '@shared/wire/constants';
import { WireError, isWireError } from '@shared/wire/errors';
import { encodeLenPrefix } from '@shared/wire/len-frame';
import { tagsEqual, type Mac } from '@shared/wire/mac';
import { encodeMuxRecord, finishMuxRecord, type MuxHeader } from '@shared/wire/mux';
import { RoundFrameStreamParser } from '@shared/wire/round-frame-stream';
import { Conn, closeServer, connectWithRetry, listen, serverPort } from './conn';
import { FoldRounds } from '@shared/fold';
import { BodyBuffer, LenFrameSplitter, MuxSplitter } from './framing';
import { acceptRankHandshake } from './rank-handshake';
import { encodeRoundFrameSliced, muxHeaderSliced, yieldToLoop } from './sliced';
import type { Tap, TapLink } from './tap';

export type RelayMode = 'fold' | 'forward';

export interface RelayOptions {
  host: number;
  hostName: string;
  ranks: number[];
  worldSize: number;
  mac: Mac;
  mode: RelayMode;
  controllerAddress: string;
  controllerPort: number;
  /** 0 = any free port. */
  dataPort?: number;
  controlPort?: number;
  listenAddress?: string;
  dataVersion: number;
  controlVersion: number;
  ceiling: number;
  tap?: Tap;
  /** Committed-read starvation deadline on rank sockets (WIRE.md 4.1). */
  starvationMs?: number;
  connectAttempts?: number;
  connectIntervalMs?: number;
  /** Lab-only historical behaviours, for reproducing the transport's incidents. */
  historical?: RelayHistorical;
}

/** Lab-only: behaviours flodl had before its fixes (WIRE.md 6), off by default. */
export interface RelayHistorical {
  /** Nagle left on (no TCP_NODELAY). */
  nagle?: boolean;
  /** An unbounded upstream queue instead of 64 records. */
  unboundedQueue?: boolean;
  /** A pre-fold relay build: every rank frame goes up as a per-rank Data record on the data channel. */
  staleBuild?: boolean;
}

export type RelayEvent =
  /** depositors ascending; order: the same ranks in the order the fold merged them (the verdict needs it). */
  | { type: 'folded'; round: number; depositors: number[]; order: number[]; bytes: number }
  | { type: 'forwarded'; round: number; rank: number; bytes: number }
  | { type: 'rankDead'; rank: number; cause: 'eof' | 'declared' | 'error' }
  | { type: 'dropped'; rank: number; reason: string; recordSeq?: number }
  | {
      type: 'error';
      channel: 'data' | 'control';
      message: string;
      code?: string;
      rank?: number;
      recordSeq?: number;
    }
  | { type: 'up'; channel: 'data' | 'control' }
  | { type: 'shutdown'; channel: 'data' | 'control'; reason: string };

interface RankSock {
  rank: number;
  conn: Conn;
  link?: TapLink;
  splitter: LenFrameSplitter;
  /** RoundFrames this rank has sent: each rank sends one per round, so the count is the next frame's round. */
  framesUp?: number;
}

export class Relay {
  private dataServer!: net.Server;
  private controlServer!: net.Server;
  private readonly listeners = new Set<(e: RelayEvent) => void>();
  readonly data: RelayChannel;
  readonly control: RelayChannel;
  private destroyed = false;

  private constructor(readonly opts: RelayOptions) {
    this.data = new RelayChannel(this, 'data');
    this.control = new RelayChannel(this, 'control');
  }

  /** Binds both loopback listeners (ports in dataPort/controlPort, 0 = free). */
  static async listen(opts: RelayOptions): Promise<Relay> {
    const r = new Relay(opts);
    const addr = opts.listenAddress ?? '127.0.0.1';
    r.dataServer = await listen(addr, opts.dataPort ?? 0);
    r.controlServer = await listen(addr, opts.controlPort ?? 0);
    r.dataPort = serverPort(r.dataServer);
    r.controlPort = serverPort(r.controlServer);
    return r;
  }

  /** The loopback listeners' ports (kept after the listeners close once every rank is in). */
  dataPort = 0;
  controlPort = 0;

  on(listener: (e: RelayEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  emit(e: RelayEvent): void {
    for (const l of this.listeners) l(e);
  }

  /** Accepts the host's ranks on both channels concurrently, then goes upstream on each. */
  async start(): Promise<void> {
    await Promise.all([this.data.start(this.dataServer), this.control.start(this.controlServer)]);
  }

  /** Resolves when both channels have shut down. */
  finished(): Promise<void> {
    return Promise.all([this.data.finished, this.control.finished]).then(() => undefined);
  }

  /** Local ranks the data channel's fold barrier is still waiting for this round. */
  waitingFor(): number[] {
    return this.data.waitingFor();
  }

  /** Kill host: every socket and listener of this relay is destroyed at once. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.data.destroy('host killed');
    this.control.destroy('host killed');
    this.dataServer?.close();
    this.controlServer?.close();
  }

  async close(): Promise<void> {
    this.destroy();
    await Promise.all([
      this.dataServer && closeServer(this.dataServer),
      this.controlServer && closeServer(this.controlServer),
    ]);
  }
}

class RelayChannel {
  private readonly ranks = new Map<number, RankSock>();
  private readonly dead = new Set<number>();
  private upstream: Conn | null = null;
  private shut = false;
  private finish!: () => void;
  readonly finished: Promise<void> = new Promise((r) => (this.finish = r));
  // Data channel fold state.
  private round = 0;
  /** Consensus frames passed down: one Broadcast per round, so the count is the next one's round. */
  private consensusDown = 0;
  /** The incremental fold of the current round (WIRE.md 4.4). */
  private readonly folds = new FoldRounds();
  private acc = this.folds.current;
  private pausedForRoom = false;
  private starveTimer: NodeJS.Timeout | null = null;
  private upReader: MuxSplitter | null = null;

  constructor(
    private readonly relay: Relay,
    readonly channel: 'data' | 'control',
  ) {}

  private get o(): RelayOptions {
    return this.relay.opts;
  }

  /** WIRE.md 4.2 RelayChannel::start: accept every local rank, then connect upstream. */
  async start(server: net.Server): Promise<void> {
    const expected = [...this.o.ranks].sort((a, b) => a - b);
    const pending = new Set<number>(expected);
    await new Promise<void>((resolve, reject) => {
      const onConn = (socket: net.Socket) => {
        const conn = new Conn(socket, { readDir: 'up', noDelay: !this.o.historical?.nagle });
        acceptRankHandshake(conn, {
          channel: this.channel,
          mac: this.o.mac,
          version: this.channel === 'data' ? this.o.dataVersion : this.o.controlVersion,
          worldSize: this.o.worldSize,
          check: (rank) =>
            !expected.includes(rank)
              ? `rank ${rank} is not one of host ${this.o.hostName}'s ranks [${expected}]`
              : !pending.has(rank)
                ? `rank ${rank} connected twice`
                : null,
          onUnit: (dir, bytes, verdict, summary, rank) => {
            const link = this.linkFor(rank);
            if (link && !conn.counter.bound) conn.counter.bind(link, conn.socket, conn);
            if (link)
              this.o.tap!.unit({
                link,
                dir,
                layer: 'handshake',
                kind: dir === 'up' ? `${this.channel}Handshake` : `${this.channel}HandshakeAck`,
                length: bytes.length,
                verdict: verdict as never,
                summary,
                bytes: [bytes],
              });
          },
        }).then(
          ({ rank, rest }) => {
            pending.delete(rank);
            this.addRank(rank, conn, rest);
            if (pending.size === 0) {
              server.off('connection', onConn);
              resolve();
            }
          },
          (e: Error) => {
            // Any handshake failure fails the whole channel start (WIRE.md 3.6).
            conn.destroy();
            this.relay.emit({
              type: 'error',
              channel: this.channel,
              message: e.message,
              code: (e as { code?: string }).code,
            });
            server.off('connection', onConn);
            reject(e);
          },
        );
      };
      server.on('connection', onConn);
    });
    server.close();
    await this.connectUpstream();
    // Rank readers start once upstream is up (flodl spawns them after HelloAck);
    // until then their bytes wait in the connection.
    for (const rs of this.ranks.values()) this.startReader(rs);
    this.starveTimer = setInterval(
      () => this.checkStarvation(),
      Math.min(1000, Math.max(20, this.starvationMs / 4)),
    );
  }

  private get starvationMs(): number {
    return this.o.starvationMs ?? COMMITTED_READ_STARVATION_MS;
  }

  /** A rank stuck mid-frame past the deadline is presumed gone (WIRE.md 4.1, 6.2). */
  private checkStarvation(): void {
    const now = performance.now();
    for (const rs of this.ranks.values()) {
      const err = rs.splitter.checkStarvation(now, this.starvationMs);
      if (err) this.rankFailed(rs, err);
    }
    const upErr = this.upReader?.checkStarvation(now, this.starvationMs);
    if (upErr) {
      this.relay.emit({
        type: 'error',
        channel: this.channel,
        message: `upstream: ${upErr.message}`,
        code: upErr.code,
      });
      void this.shutdown(`upstream starved: ${upErr.message}`);
    }
  }

  /** The loopback link of a rank (registered on first sight). */
  private linkFor(rank: number): TapLink | undefined {
    return this.o.tap?.link({
      id: `${this.o.hostName}.r${rank}.${this.channel}`,
      from: `rank ${rank}`,
      to: `relay ${this.o.hostName}`,
      channel: this.channel,
      kind: 'loopback',
      host: this.o.host,
      rank,
    });
  }

  private addRank(rank: number, conn: Conn, rest: Uint8Array): void {
    const link = this.linkFor(rank);
    if (link && !conn.counter.bound) conn.counter.bind(link, conn.socket, conn);
    const rs: RankSock = { rank, conn, link, splitter: this.makeSplitter(rank, () => rs) };
    this.ranks.set(rank, rs);
    if (rest.length > 0) conn.unshift(rest);
  }

  private startReader(rs: RankSock): void {
    rs.conn.setConsumer((chunk) => {
      try {
        rs.splitter.push(chunk);
      } catch (e) {
        this.rankFailed(rs, e as Error);
      }
    });
    rs.conn.onClose(() => this.rankGone(rs));
  }

  private makeSplitter(rank: number, rs: () => RankSock): LenFrameSplitter {
    if (this.channel === 'control') {
      let body: BodyBuffer | null = null;
      return new LenFrameSplitter(this.o.ceiling, {
        onStart: (len) => (body = new BodyBuffer(len)),
        onChunk: (b) => body!.push(b),
        onEnd: () => this.controlUp(rs(), body!.bytes()),
      });
    }
    return new LenFrameSplitter(this.o.ceiling, this.dataSink(rank, rs));
  }

  // ---- control channel: pure byte router (WIRE.md 4.3) ----

  private controlUp(rs: RankSock, blob: Uint8Array): void {
    if (rs.link) {
      this.o.tap!.unit({
        link: rs.link,
        dir: 'up',
        layer: 'lenframe',
        kind: 'ControlFrame',
        rank: rs.rank,
        length: blob.length + 4,
        summary: `ControlFrame from rank ${rs.rank} (${blob.length} B)`,
        bytes: [encodeLenPrefix(blob.length, this.o.ceiling), blob],
      });
    }
    this.sendUp([encodeMuxRecord({ kind: 'Data', rank: rs.rank, payload: blob }, this.o.mac)]);
  }

  // ---- data channel ----

  private dataSink(rank: number, rsOf: () => RankSock) {
    let parser: RoundFrameStreamParser | null = null;
    let forwardBody: BodyBuffer | null = null;
    let dropping = false;
    let cap: ReturnType<Tap['capture']> | null = null;
    let frameLen = 0;
    let frameRound = 0;
    return {
      onStart: (len: number) => {
        frameLen = len;
        const rs = rsOf();
        frameRound = rs.framesUp ?? 0;
        rs.framesUp = frameRound + 1;
        cap = this.o.tap ? this.o.tap.capture() : null;
        cap?.push(encodeLenPrefix(len, this.o.ceiling));
        dropping = this.dead.has(rank);
        if (dropping) return;
        if (this.o.mode === 'forward' || this.o.historical?.staleBuild) {
          forwardBody = new BodyBuffer(len);
          parser = new RoundFrameStreamParser(this.o.mac, { ceiling: this.o.ceiling, totalLen: len });
        } else {
          parser = new RoundFrameStreamParser(this.o.mac, {
            ceiling: this.o.ceiling,
            totalLen: len,
            sink: this.acc.beginDeposit(rank),
          });
        }
      },
      onChunk: (b: Uint8Array) => {
        cap?.push(b);
        if (dropping) return;
        forwardBody?.push(b);
        parser!.push(b);
      },
      onEnd: () => {
        const rs = rsOf();
        if (dropping) {
          const recordSeq = this.unitFor(
            rs,
            'up',
            'RoundFrame',
            frameLen + 4,
            cap,
            `RoundFrame from dead rank ${rank}: dropped`,
            'ok',
            frameRound,
          );
          this.relay.emit({
            type: 'dropped',
            rank,
            reason: 'late frame from a rank already marked dead',
            recordSeq,
          });
          return;
        }
        parser!.end();
        this.unitFor(
          rs,
          'up',
          'RoundFrame',
          frameLen + 4,
          cap,
          `RoundFrame from rank ${rank} (${frameLen} B)`,
          'ok',
          frameRound,
        );
        if (this.o.historical?.staleBuild) {
          // Lab-only: a pre-fold relay build sends per-rank Data on the data channel (WIRE.md 6.11).
          const payload = forwardBody!.bytes();
          forwardBody = null;
          this.sendUp([encodeMuxRecord({ kind: 'Data', rank, payload }, this.o.mac)]);
        } else if (this.o.mode === 'forward') {
          const payload = forwardBody!.bytes();
          forwardBody = null;
          const round = this.round;
          this.sendUpLater(async () => {
            this.relay.emit({ type: 'forwarded', round, rank, bytes: payload.length });
            return [await muxHeaderSliced(REC_HOST_FRAME, rank, [payload], this.o.mac), payload];
          });
        } else {
          this.maybeShip();
        }
      },
    };
  }

  /** Records a unit on a rank's loopback link; its seq (undefined without a tap). */
  private unitFor(
    rs: RankSock | undefined,
    dir: Direction,
    kind: string,
    length: number,
    cap: ReturnType<Tap['capture']> | null | Uint8Array[],
    summary: string,
    verdict: 'ok' | string = 'ok',
    round?: number,
  ): number | undefined {
    if (!rs?.link || !this.o.tap) return undefined;
    return this.o.tap.unit({
      link: rs.link,
      dir,
      layer: 'lenframe',
      kind,
      rank: rs.rank,
      ...(round !== undefined ? { round } : {}),
      length,
      summary,
      verdict: verdict as never,
      bytes: cap ?? undefined,
    });
  }

  /** Ships the round when every local alive rank has deposited (and one deposit exists). */
  private maybeShip(): void {
    if (this.channel !== 'data' || this.o.mode !== 'fold' || this.shut) return;
    if (this.acc.depositCount === 0) return;
    for (const r of this.ranks.keys()) if (!this.dead.has(r) && !this.acc.hasDeposited(r)) return;
    // Re-encode the sum in the round's dtype and re-sign it with the salt.
    // Take the round now; re-encode and re-sign it in slices (records queued after it wait their turn).
    const taken = this.acc.resultSliced(yieldToLoop);
    const depositors = this.acc.ranks;
    const order = this.acc.mergeOrder;
    const round = this.round;
    this.round++;
    this.acc = this.folds.next();
    this.sendUpLater(async () => {
      const { chunks, length } = await encodeRoundFrameSliced((await taken)!, this.o.mac);
      this.relay.emit({ type: 'folded', round, depositors, order, bytes: length });
      return [await muxHeaderSliced(REC_HOST_FRAME, 0, chunks, this.o.mac), ...chunks];
    });
  }

  waitingFor(): number[] {
    // Before any deposit the barrier has not started: nobody is being waited for yet.
    if (this.shut || this.o.mode !== 'fold' || this.acc.depositCount === 0) return [];
    return [...this.ranks.keys()].filter((r) => !this.dead.has(r) && !this.acc.hasDeposited(r));
  }

  /** WIRE.md 4.4: a local rank's death removes it from the barrier; its finished deposit stays. */
  markDead(rank: number, cause: 'eof' | 'declared' | 'error'): void {
    if (this.dead.has(rank) || !this.ranks.has(rank)) return;
    this.dead.add(rank);
    if (this.channel === 'data') {
      this.relay.emit({ type: 'rankDead', rank, cause });
      this.maybeShip();
    }
  }

  private rankFailed(rs: RankSock, e: Error): void {
    const code = isWireError(e) ? e.code : 'BAD_PAYLOAD';
    const recordSeq = this.unitFor(
      rs,
      'up',
      'RoundFrame',
      0,
      null,
      `rejected: ${e.message}`,
      code ?? 'BAD_PAYLOAD',
    );
    this.relay.emit({
      type: 'error',
      channel: this.channel,
      message: `rank ${rs.rank}: ${e.message}`,
      code,
      rank: rs.rank,
      recordSeq,
    });
    if (this.channel === 'data') {
      // Any fold, HMAC, parse or truncation failure shuts the whole data channel down (WIRE.md 4.4).
      this.destroy(`fold error: ${e.message}`);
    } else {
      rs.conn.destroy();
    }
  }

  private rankGone(rs: RankSock): void {
    if (this.shut) return;
    const midFrame = rs.splitter.closeError();
    if (midFrame && this.channel === 'data' && this.o.mode === 'fold' && !this.dead.has(rs.rank)) {
      // Part of its frame may already be in the host's sums (merged before the
      // footer MAC, WIRE.md 4.4): the round cannot be trusted, as in flodl.
      this.rankFailed(
        rs,
        new WireError('TRUNCATED', `rank ${rs.rank} closed mid-frame after part of its frame was folded`),
      );
      return;
    }
    if (this.channel === 'data') {
      this.markDead(rs.rank, 'eof');
      this.sendUp([
        encodeMuxRecord({ kind: 'Control', msg: { type: 'RankExit', rank: rs.rank } }, this.o.mac),
      ]);
    } else {
      this.dead.add(rs.rank);
      this.sendUp([
        encodeMuxRecord({ kind: 'Control', msg: { type: 'RankExit', rank: rs.rank } }, this.o.mac),
      ]);
    }
    this.ranks.delete(rs.rank);
    // The last local rank leaving shuts the channel down (after the queue drains).
    if (this.ranks.size === 0) void this.shutdown('every local rank left');
  }

  // ---- upstream ----

  private async connectUpstream(): Promise<void> {
    const socket = await connectWithRetry(this.o.controllerAddress, this.o.controllerPort, {
      attempts: this.o.connectAttempts ?? 60,
      intervalMs: this.o.connectIntervalMs ?? 500,
      isCancelled: () => this.shut,
    });
    const up = new Conn(socket, {
      readDir: 'down',
      onWriteError: (e) => void this.shutdown(`upstream write failed: ${e.message}`),
      noDelay: !this.o.historical?.nagle,
      queueBound: this.o.historical?.unboundedQueue ? Infinity : undefined,
    });
    this.upstream = up;
    up.send(encodeChannelMagic(this.channel));
    up.send(
      encodeMuxRecord(
        {
          kind: 'Control',
          msg: { type: 'Hello', host: this.o.hostName, ranks: [...this.o.ranks].sort((a, b) => a - b) },
        },
        this.o.mac,
      ),
    );
    await new Promise<void>((resolve, reject) => {
      let gotAck = false;
      let body: BodyBuffer | null = null;
      let header: MuxHeader | null = null;
      let headerBytes: Uint8Array | null = null;
      let macStream: ReturnType<Mac['stream']> | null = null;
      const splitter = new MuxSplitter(this.o.ceiling, {
        onStart: (h, hb) => {
          header = h;
          headerBytes = hb;
          body = new BodyBuffer(h.payloadLen);
          macStream = this.o.mac.stream();
          macStream.update(hb.subarray(0, MUX_MAC_PREFIX_LEN));
        },
        onChunk: (b) => {
          body!.push(b);
          macStream!.update(b);
        },
        onEnd: () => {
          const payload = body!.bytes();
          const tagOk = tagsEqual(macStream!.finish(), header!.tag);
          if (!gotAck) {
            const rec = finishMuxRecord(headerBytes!, payload, this.o.mac);
            if (rec.kind !== 'Control' || rec.msg.type !== 'HelloAck')
              throw new Error(`expected HelloAck, got ${rec.kind}`);
            gotAck = true;
            resolve();
            return;
          }
          if (!tagOk)
            throw Object.assign(new Error('mux record HMAC verification failed'), { code: 'HMAC_MISMATCH' });
          this.downstream(header!, headerBytes!, payload);
        },
      });
      this.upReader = splitter;
      up.setConsumer((chunk) => {
        try {
          splitter.push(chunk);
        } catch (e) {
          this.relay.emit({
            type: 'error',
            channel: this.channel,
            message: `upstream: ${(e as Error).message}`,
            code: (e as { code?: string }).code,
          });
          if (!gotAck) reject(e as Error);
          void this.shutdown(`upstream wire error: ${(e as Error).message}`);
        }
      });
      up.onClose(() => {
        if (!gotAck) reject(new Error('controller closed connection before HelloAck'));
        void this.shutdown('upstream EOF');
      });
    });
    this.relay.emit({ type: 'up', channel: this.channel });
  }

  /** The upstream reader: the sole writer of every rank socket. */
  private downstream(header: MuxHeader, headerBytes: Uint8Array, payload: Uint8Array): void {
    const kind = header.kind;
    if (kind === REC_BROADCAST) {
      if (this.channel !== 'data') return; // "desynced controller?": dropped
      const prefix = encodeLenPrefix(payload.length, this.o.ceiling);
      const round = this.consensusDown++;
      for (const rs of this.ranks.values()) {
        if (this.dead.has(rs.rank)) continue;
        rs.conn.writer.enqueue([prefix, payload]);
        this.unitFor(
          rs,
          'down',
          'RoundFrame',
          payload.length + 4,
          [prefix, payload],
          `consensus to rank ${rs.rank} (${payload.length} B)`,
          'ok',
          round,
        );
      }
      return;
    }
    if (kind === REC_DATA) {
      const rs = this.ranks.get(header.rank);
      if (!rs) return; // unknown rank: dropped silently (WIRE.md 4.3)
      const prefix = encodeLenPrefix(payload.length, this.o.ceiling);
      rs.conn.writer.enqueue([prefix, payload]);
      this.unitFor(
        rs,
        'down',
        this.channel === 'control' ? 'ControlFrame' : 'Data',
        payload.length + 4,
        [prefix, payload],
        `${this.channel === 'control' ? 'ControlFrame' : 'Data'} to rank ${rs.rank} (${payload.length} B)`,
      );
      return;
    }
    const rec = finishMuxRecord(headerBytes, payload, this.o.mac);
    if (rec.kind === 'Control' && rec.msg.type === 'DeclareDead' && this.channel === 'data')
      this.markDead(rec.msg.rank, 'declared');
    // Stray Hello/HelloAck, HostFrame from upstream: dropped.
  }

  /** Upstream records keep their order even when one of them is encoded asynchronously. */
  private upChain: Promise<void> = Promise.resolve();

  private sendUp(parts: Uint8Array[]): void {
    this.upChain = this.upChain.then(() => this.sendUpNow(parts));
  }

  private sendUpLater(make: () => Promise<Uint8Array[]>): void {
    this.upChain = this.upChain.then(async () => {
      if (this.shut) return;
      this.sendUpNow(await make());
    });
  }

  /** Enqueue upstream; when the bounded queue is full, stop reading ranks until it drains (backpressure). */
  private sendUpNow(parts: Uint8Array[]): void {
    const up = this.upstream;
    if (!up) return;
    const room = up.writer.enqueue(parts);
    if (!room && !this.pausedForRoom) {
      this.pausedForRoom = true;
      for (const rs of this.ranks.values()) rs.conn.pause('backpressure');
      void up.writer.room().then(() => {
        this.pausedForRoom = false;
        for (const rs of this.ranks.values()) rs.conn.resume('backpressure');
      });
    }
  }

  /** Shutdown: queued records (e.g. the last RankExit) drain first, then everything closes. */
  async shutdown(reason: string): Promise<void> {
    if (this.shut) return;
    this.shut = true;
    if (this.starveTimer) clearInterval(this.starveTimer);
    this.relay.emit({ type: 'shutdown', channel: this.channel, reason });
    await this.upChain;
    if (this.upstream) await this.upstream.writer.end();
    for (const rs of this.ranks.values()) {
      await rs.conn.writer.idle();
      rs.conn.destroy();
    }
    this.upstream?.destroy();
    this.finish();
  }

  destroy(reason: string): void {
    if (!this.shut) this.relay.emit({ type: 'shutdown', channel: this.channel, reason });
    this.shut = true;
    if (this.starveTimer) clearInterval(this.starveTimer);
    this.upstream?.destroy();
    for (const rs of this.ranks.values()) rs.conn.destroy();
    this.finish();
  }
}
