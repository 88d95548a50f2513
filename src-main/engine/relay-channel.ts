// What every relay channel shares (WIRE.md 4.2, 4.7): accept the host's ranks
// (their handshakes), connect upstream (channel magic, Hello, HelloAck), read
// each rank with the codec's LenFrameReader and upstream with MuxRecordStream,
// send upstream through the single bounded writer with backpressure, and shut
// down with queued records drained first. What a channel does with a rank's
// frames and with upstream records is its role: ControlRouter, FoldUplink,
// ForwardUplink.
//
// Two kinds of rank failure, as in flodl's rank_reader: a read error (a clean
// close mid-frame, a length over the ceiling, a starved committed read) is that
// rank's death: RankExit goes up and the channel carries on. A frame that was
// read but is unusable (HMAC, parse or fold validation: a role's sink throws)
// shuts the whole channel down; records already queued still go up first.
import { encodeLenPrefix } from '@shared/wire/len-frame';
import { encodeChannelMagic } from '@shared/wire/channel';
import { COMMITTED_READ_STARVATION_MS } from '@shared/wire/constants';
import { isWireError } from '@shared/wire/errors';
import { LenFrameReader } from '@shared/wire/len-frame-reader';
import { encodeMuxRecord } from '@shared/wire/mux';
import type { FrameSink } from '@shared/wire/reader-core';
import { receiveArena } from '@shared/fold';
import { Conn, connectWithRetry } from './conn';
import { FrameRejected, rejectingOnThrow } from './frame-rejection';
import { MuxRecordStream, upstreamRecord, type UpstreamRecord } from './mux-stream';
import { acceptLocalRanks } from './rank-accept';
import type { ChannelName, RankAcceptor, RelayEvent, RelayOptions } from './relay-options';
import { loopbackLinkInfo } from './loopback-link';

export type { UpstreamRecord } from './mux-stream';
import type { Tap, TapLink } from './tap';

/** One local rank's connection and its reader (the role's sink behind it). */
export class RankSock {
  /** Left (EOF or read error): nothing more is read from it. */
  gone = false;
  readonly reader: LenFrameReader;

  constructor(
    readonly rank: number,
    readonly conn: Conn,
    readonly link: TapLink | undefined,
    ceiling: number,
    sinkFor: (rs: RankSock) => FrameSink,
  ) {
    this.reader = new LenFrameReader({
      ceiling,
      now: () => performance.now(),
      sink: rejectingOnThrow(sinkFor(this)),
    });
  }
}

export type UnitBytes = ReturnType<Tap['capture']> | Uint8Array[] | null;

export abstract class RelayChannel {
  protected readonly ranks = new Map<number, RankSock>();
  /** Shutdown began: ranks are no longer read; records already queued still go up. */
  protected shut = false;
  /** Torn down: nothing more goes anywhere. */
  private torn = false;
  private upstream: Conn | null = null;
  private upReader: MuxRecordStream | null = null;
  private finish!: () => void;
  readonly finished: Promise<void> = new Promise((r) => (this.finish = r));
  private pausedForRoom = false;
  private starveTimer: NodeJS.Timeout | null = null;
  /** Upstream records keep their order even when one of them is encoded asynchronously. */
  private upChain: Promise<void> = Promise.resolve();

  constructor(
    protected readonly opts: RelayOptions,
    protected readonly emit: (e: RelayEvent) => void,
    readonly channel: ChannelName,
  ) {}

  // ---- the role's part ----

  /** Where one rank's len-framed blobs go, chunk by chunk. A throw rejects the frame (see above). */
  protected abstract frameSink(rs: RankSock): FrameSink;
  /** A verified record from the controller. */
  protected abstract fromUpstream(rec: UpstreamRecord): void;
  /** A rank left (EOF or read error); RankExit is queued right after this. */
  protected abstract rankLeft(rank: number, cause: 'eof' | 'error'): void;
  /** Local ranks a barrier is waiting for (only the fold has one). */
  waitingFor(): number[] {
    return [];
  }

  // ---- start: ranks, then upstream (WIRE.md 4.2 RelayChannel::start) ----

  async start(server: RankAcceptor): Promise<void> {
    const accepted = await acceptLocalRanks(server, {
      opts: this.opts,
      channel: this.channel,
      bindLink: (rank, conn) => this.bindLink(rank, conn),
      onError: (e) =>
        this.emit({
          type: 'error',
          channel: this.channel,
          message: e.message,
          code: (e as { code?: string }).code,
        }),
    });
    for (const { rank, conn, rest } of accepted) this.addRank(rank, conn, rest);
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

  /** The loopback link of a rank (registered on first sight), with the connection's bytes on it. */
  private bindLink(rank: number, conn: Conn): TapLink | undefined {
    const link = this.opts.tap?.link(
      loopbackLinkInfo(this.opts.host, this.opts.hostName, rank, this.channel),
    );
    if (link && !conn.counter.bound) conn.counter.bind(link, conn.endpoints, conn);
    return link;
  }

  private addRank(rank: number, conn: Conn, rest: Uint8Array): void {
    const rs = new RankSock(rank, conn, this.bindLink(rank, conn), this.opts.ceiling, (r) =>
      this.frameSink(r),
    );
    this.ranks.set(rank, rs);
    if (rest.length > 0) conn.unshift(rest);
    if (this.readsIntoArena()) {
      const arena = receiveArena();
      if (arena) conn.readIntoArena(arena);
    }
  }

  /**
   * True for a role whose reader keeps nothing of a rank's bytes past its
   * call except through a staging that holds arena blocks (the fold): its
   * rank sockets then read into the fold kernel's receive arena.
   */
  protected readsIntoArena(): boolean {
    return false;
  }

  // ---- reading the ranks ----

  private startReader(rs: RankSock): void {
    rs.conn.setConsumer((chunk) => {
      if (this.shut || rs.gone) return;
      try {
        rs.reader.push(chunk);
      } catch (e) {
        if (e instanceof FrameRejected) this.frameRejected(rs, e.reason);
        else this.rankReadFailed(rs, e as Error);
      }
    });
    rs.conn.onClose(() => this.rankClosed(rs));
  }

  private get starvationMs(): number {
    return this.opts.starvationMs ?? COMMITTED_READ_STARVATION_MS;
  }

  /** A peer stuck mid-frame past the deadline is presumed gone (WIRE.md 4.1, 6.2). */
  private checkStarvation(): void {
    const now = performance.now();
    for (const rs of this.ranks.values()) {
      const err = rs.gone ? null : rs.reader.checkStarvation(now, this.starvationMs);
      if (err) this.rankReadFailed(rs, err);
    }
    const upErr = this.upReader?.checkStarvation(now, this.starvationMs);
    if (upErr) {
      this.emit({
        type: 'error',
        channel: this.channel,
        message: `upstream: ${upErr.message}`,
        code: upErr.code,
      });
      void this.shutdown(`upstream starved: ${upErr.message}`);
    }
  }

  /** A clean close between frames is an EOF; mid-frame it is a read error ("peer closed mid-frame"). */
  private rankClosed(rs: RankSock): void {
    if (this.shut || rs.gone) return;
    try {
      rs.reader.end();
    } catch (e) {
      this.report(rs, e as Error);
      return this.rankGone(rs, 'error');
    }
    this.rankGone(rs, 'eof');
  }

  /** A read error is the rank's death, not the channel's (flodl's rank_reader). */
  private rankReadFailed(rs: RankSock, e: Error): void {
    if (rs.gone) return;
    this.report(rs, e);
    this.rankGone(rs, 'error');
    rs.conn.destroy();
  }

  /** A frame was read but cannot be used: the whole channel shuts down, queued records drain first. */
  private frameRejected(rs: RankSock, e: Error): void {
    this.report(rs, e);
    void this.shutdown(`fold error: ${e.message}`);
  }

  /** A round that cannot be trusted: the channel shuts down as on a frame rejection. */
  protected failFold(message: string, rank?: number): void {
    this.emit({ type: 'error', channel: this.channel, message, code: 'BAD_PAYLOAD', rank });
    void this.shutdown(`fold error: ${message}`);
  }

  private report(rs: RankSock, e: Error): void {
    const code = isWireError(e) ? e.code : 'BAD_PAYLOAD';
    const recordSeq = this.unitFor(
      rs,
      'up',
      this.channel === 'data' ? 'RoundFrame' : 'ControlFrame',
      0,
      null,
      `rejected: ${e.message}`,
      code,
    );
    this.emit({
      type: 'error',
      channel: this.channel,
      message: `rank ${rs.rank}: ${e.message}`,
      code,
      rank: rs.rank,
      recordSeq,
    });
  }

  private rankGone(rs: RankSock, cause: 'eof' | 'error'): void {
    rs.gone = true;
    this.rankLeft(rs.rank, cause);
    this.sendUp([
      encodeMuxRecord({ kind: 'Control', msg: { type: 'RankExit', rank: rs.rank } }, this.opts.mac),
    ]);
    this.ranks.delete(rs.rank);
    // The last local rank leaving shuts the channel down (after the queue drains).
    if (this.ranks.size === 0) void this.shutdown('every local rank left');
  }

  /** A rank-tagged payload from upstream, len-framed down to that rank (an unknown rank: dropped silently). */
  protected sendToRank(rank: number, payload: Uint8Array, kind: 'ControlFrame' | 'Data'): void {
    const rs = this.ranks.get(rank);
    if (!rs) return;
    const prefix = encodeLenPrefix(payload.length, this.opts.ceiling);
    rs.conn.writer.enqueue([prefix, payload]);
    this.unitFor(
      rs,
      'down',
      kind,
      payload.length + 4,
      [prefix, payload],
      `${kind} to rank ${rank} (${payload.length} B)`,
    );
  }

  /** Records a unit on a rank's loopback link; its seq (undefined without a tap). */
  protected unitFor(
    rs: RankSock | undefined,
    dir: 'up' | 'down',
    kind: string,
    length: number,
    bytes: UnitBytes,
    summary: string,
    verdict: 'ok' | string = 'ok',
    round?: number,
  ): number | undefined {
    if (!rs?.link || !this.opts.tap) return undefined;
    return this.opts.tap.unit({
      link: rs.link,
      dir,
      layer: 'lenframe',
      kind,
      rank: rs.rank,
      ...(round !== undefined ? { round } : {}),
      length,
      summary,
      verdict: verdict as never,
      bytes: bytes ?? undefined,
    });
  }

  // ---- upstream ----

  private async connectUpstream(): Promise<void> {
    const socket = this.opts.dialUpstream
      ? await this.opts.dialUpstream(this.channel)
      : await connectWithRetry(this.opts.controllerAddress, this.opts.controllerPort, {
          attempts: this.opts.connectAttempts ?? 60,
          intervalMs: this.opts.connectIntervalMs ?? 500,
          isCancelled: () => this.shut,
        });
    const up = new Conn(socket, {
      readDir: 'down',
      onWriteError: (e) => void this.shutdown(`upstream write failed: ${e.message}`),
      noDelay: !this.opts.historical?.nagle,
      queueBound: this.opts.historical?.unboundedQueue ? Infinity : undefined,
    });
    this.upstream = up;
    up.send(encodeChannelMagic(this.channel));
    const ranks = [...this.opts.ranks].sort((a, b) => a - b);
    up.send(
      encodeMuxRecord(
        { kind: 'Control', msg: { type: 'Hello', host: this.opts.hostName, ranks } },
        this.opts.mac,
      ),
    );
    await new Promise<void>((resolve, reject) => {
      let acked = false;
      this.upReader = new MuxRecordStream(up, {
        mac: this.opts.mac,
        ceiling: this.opts.ceiling,
        handler: {
          begin: () => null,
          end: (header, _hb, payload) => {
            const rec = upstreamRecord(header, payload!);
            if (!acked) {
              if (rec.kind !== 'Control' || rec.msg.type !== 'HelloAck')
                throw new Error(`expected HelloAck, got ${rec.kind === 'Control' ? rec.msg.type : rec.kind}`);
              acked = true;
              resolve();
              return;
            }
            // flodl's upstream reader stops at shutdown.
            if (!this.shut) this.fromUpstream(rec);
          },
          fail: (e) => {
            this.emit({
              type: 'error',
              channel: this.channel,
              message: `upstream: ${e.message}`,
              code: (e as { code?: string }).code,
            });
            if (!acked) reject(e);
            void this.shutdown(`upstream wire error: ${e.message}`);
          },
        },
      });
      up.onClose(() => {
        if (!acked) reject(new Error('controller closed connection before HelloAck'));
        void this.shutdown('upstream EOF');
      });
    });
    this.emit({ type: 'up', channel: this.channel });
  }

  protected sendUp(parts: Uint8Array[]): void {
    this.upChain = this.upChain.then(() => this.sendUpNow(parts));
  }

  /** A record encoded asynchronously (model-sized, in slices), still in queue order. */
  protected sendUpLater(make: () => Promise<Uint8Array[]>): void {
    this.upChain = this.upChain.then(async () => {
      if (this.torn) return;
      this.sendUpNow(await make());
    });
  }

  /** Enqueue upstream; when the bounded queue is full, stop reading ranks until it drains (backpressure). */
  private sendUpNow(parts: Uint8Array[]): void {
    const up = this.upstream;
    if (!up || this.torn) return;
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

  // ---- the end ----

  /** Shutdown: ranks are no longer read, queued records (the last RankExit, a HostFrame) drain, then everything closes. */
  async shutdown(reason: string): Promise<void> {
    if (this.shut) return;
    this.shut = true;
    if (this.starveTimer) clearInterval(this.starveTimer);
    this.emit({ type: 'shutdown', channel: this.channel, reason });
    for (const rs of this.ranks.values()) rs.conn.pause('shutdown');
    await this.upChain;
    if (this.upstream) await this.upstream.writer.end();
    for (const rs of this.ranks.values()) {
      await rs.conn.writer.idle();
      rs.conn.destroy();
    }
    this.upstream?.destroy();
    this.finish();
  }

  /** Kill: every socket is destroyed at once, nothing queued goes out. */
  destroy(reason: string): void {
    if (!this.shut) this.emit({ type: 'shutdown', channel: this.channel, reason });
    this.shut = true;
    this.torn = true;
    if (this.starveTimer) clearInterval(this.starveTimer);
    this.upstream?.destroy();
    for (const rs of this.ranks.values()) rs.conn.destroy();
    this.finish();
  }
}
