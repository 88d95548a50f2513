// The controller (data channel, WIRE.md 4.5): accepts relays (or, in the
// lab-only direct mode, ranks), validates Hello and hands each connection to
// its own source (HostSource, DirectSource) that reads it; then, per round,
// waits for a contribution from every connection that still has a live rank,
// reduces the mass-weighted average and scatters one Broadcast per live
// connection (RoundReducer). Dead-diff forwarding sends DeclareDead for every
// newly dead rank to the relay that owns it.
//
// Loss policy (WIRE.md 7.2): `strict` is flodl's code: relay EOF or RankExit
// of a live rank requests a clean shutdown of the reduce, a wire error from a
// connection with a live rank (a HostFrame failing its MAC) becomes the
// reduce's error. `elastic` (lab-only) declares that connection's ranks dead
// and goes on with the others.
import { readU32LE } from '@shared/wire/bytes';
import { expectChannelMagic } from '@shared/wire/channel';
import { COMMITTED_READ_STARVATION_MS, HANDSHAKE_MAGIC_RANK } from '@shared/wire/constants';
import type { WireError } from '@shared/wire/errors';
import { encodeMuxRecord, muxKindOfByte } from '@shared/wire/mux';
import { decodeRelayControl } from '@shared/wire/relay-control';
import type { Conn } from './conn';
import type {
  ContributionSource,
  ControllerEvent,
  ControllerOptions,
  SourceOwner,
} from './controller-options';
import { DirectSource } from './direct-source';
import { HostSource } from './host-source';
import { MuxRecordStream } from './mux-stream';
import { acceptRankHandshake } from './rank-handshake';
import { RoundReducer } from './round-reducer';
import { UplinkRecorder, hostIndexOf } from './uplink-recorder';

export type { ControllerEvent, ControllerHistorical, ControllerOptions } from './controller-options';

type Reject = (message: string, code?: string) => void;

export class Controller implements SourceOwner {
  private readonly sources: ContributionSource[] = [];
  private readonly covered = new Set<number>();
  private readonly listeners = new Set<(e: ControllerEvent) => void>();
  private readonly reducer: RoundReducer;
  private nextIndex = 0;
  private isReady = false;
  private starveTimer: NodeJS.Timeout | null = null;

  constructor(readonly opts: ControllerOptions) {
    this.reducer = new RoundReducer(opts, this.sources, (e) => this.emit(e));
    void this.reducer.finished().then(() => {
      if (this.starveTimer) clearInterval(this.starveTimer);
    });
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

  /** The round being collected. */
  get round(): number {
    return this.reducer.round;
  }

  /** Resolves when the reduce loop has ended (shutdown or error). */
  finished(): Promise<void> {
    return this.reducer.finished();
  }

  /** Live ranks whose contribution the current round still lacks. */
  waitingFor(): number[] {
    return this.reducer.waitingFor();
  }

  // ---- accept (WIRE.md 4.5 phase 1) ----

  /** A DATA-channel connection from the port mux; `head` starts with the magic. */
  attach(conn: Conn, head: Uint8Array): void {
    const recorder = new UplinkRecorder(this.opts.tap);
    const index = this.nextIndex++;
    const reject: Reject = (message, code = 'BAD_PAYLOAD') => {
      recorder.bind(conn, `conn${index}.uplink.data`, `connection ${index}`, 'data', -1);
      this.emit({ type: 'error', message, code });
      conn.destroy();
    };
    if (this.isReady || this.reducer.stopping) return reject('connection after every rank was covered');
    try {
      expectChannelMagic(head.subarray(0, 4), 'data');
    } catch (e) {
      return reject((e as Error).message, (e as WireError).code);
    }
    recorder.record({
      dir: 'up',
      layer: 'channelMagic',
      kind: 'DATA magic',
      length: 4,
      summary: 'channel magic DATA 0xF10D17E1',
      bytes: [head.subarray(0, 4)],
    });
    const timer = setTimeout(
      () => reject('no Hello within the Hello read timeout'),
      this.opts.helloTimeoutMs ?? 10_000,
    );
    conn.onClose(() => clearTimeout(timer));
    const accepted: Reject = (message, code) => {
      clearTimeout(timer);
      reject(message, code);
    };
    // Direct mode (lab-only): a rank dials with its data handshake instead of a relay's Hello.
    let first: Uint8Array = head.subarray(4);
    const decide = (): boolean => {
      if (first.length < 4) return false;
      conn.setConsumer(null);
      const direct = this.opts.mode === 'direct' && readU32LE(first, 0) === HANDSHAKE_MAGIC_RANK;
      if (direct) this.acceptDirect(conn, recorder, first, timer, accepted);
      else this.acceptHello(conn, recorder, first, index, timer, accepted);
      return true;
    };
    if (!decide()) {
      conn.setConsumer((chunk) => {
        first = Buffer.concat([first, chunk]);
        decide();
      });
    }
  }

  /** Reads the first record, which must be a valid Hello, answers HelloAck and hands the connection to a HostSource. */
  private acceptHello(
    conn: Conn,
    recorder: UplinkRecorder,
    first: Uint8Array,
    index: number,
    timer: NodeJS.Timeout,
    reject: Reject,
  ): void {
    const stream: MuxRecordStream = new MuxRecordStream(conn, {
      mac: this.opts.mac,
      ceiling: this.opts.ceiling,
      // The bytes not yet read are `first`: the stream starts that far back from what has arrived.
      streamOffset: conn.bytesArrived - first.length,
      handler: {
        begin: () => null,
        end: (h, headerBytes, payload) => {
          clearTimeout(timer);
          const kind = muxKindOfByte(h.kind);
          const msg = kind === 'Control' ? decodeRelayControl(payload!) : null;
          if (msg?.type !== 'Hello')
            return reject(`first record must be Control(Hello), got ${kind}${msg ? `(${msg.type})` : ''}`);
          const { host: hostName, ranks } = msg;
          const bad = ranks.find((r) => r >= this.opts.worldSize);
          if (bad !== undefined)
            return reject(
              `Hello from ${hostName}: rank ${bad} out of range for world_size ${this.opts.worldSize}`,
            );
          const dup = ranks.find((r, i) => this.covered.has(r) || ranks.indexOf(r) !== i);
          if (dup !== undefined) return reject(`Hello from ${hostName}: rank ${dup} announced twice`);
          const host = hostIndexOf(hostName, index);
          recorder.bind(conn, `${hostName}.uplink.data`, `relay ${hostName}`, 'data', host);
          recorder.record({
            dir: 'up',
            layer: 'mux',
            kind: 'Hello',
            length: headerBytes.length + payload!.length,
            summary: `Hello host=${hostName} ranks=[${ranks}]`,
            bytes: [headerBytes, payload!],
          });
          const ack = encodeMuxRecord({ kind: 'Control', msg: { type: 'HelloAck' } }, this.opts.mac);
          conn.send(ack);
          recorder.record({
            dir: 'down',
            layer: 'mux',
            kind: 'HelloAck',
            length: ack.length,
            summary: 'HelloAck',
            bytes: [ack],
          });
          this.addSource(new HostSource(conn, recorder, hostName, host, ranks, stream, this));
        },
        fail: (e) => reject(e.message, (e as WireError).code ?? 'BAD_PAYLOAD'),
      },
    });
    conn.unshift(first);
  }

  private acceptDirect(
    conn: Conn,
    recorder: UplinkRecorder,
    first: Uint8Array,
    timer: NodeJS.Timeout,
    reject: Reject,
  ): void {
    conn.unshift(first);
    const hostOf = (r: number) => this.opts.hostOfRank?.(r) ?? -1;
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
        recorder.bind(conn, `r${r}.uplink.data`, `rank ${r}`, 'data', hostOf(r), r);
        recorder.record({
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
      ({ rank, rest }) => {
        clearTimeout(timer);
        const src = new DirectSource(conn, recorder, rank, hostOf(rank), this);
        this.addSource(src);
        src.start(rest);
      },
      (e: Error) => reject(e.message),
    );
  }

  private addSource(src: ContributionSource): void {
    this.sources.push(src);
    for (const r of src.ranks) this.covered.add(r);
    src.conn.onClose(() => this.sourceClosed(src));
    this.starveTimer ??= setInterval(
      () => this.checkStarvation(),
      Math.min(1000, Math.max(20, (this.opts.starvationMs ?? COMMITTED_READ_STARVATION_MS) / 4)),
    );
    if (this.covered.size === this.opts.worldSize && !this.isReady) {
      this.isReady = true;
      this.emit({ type: 'ready' });
      this.reducer.start();
    }
  }

  // ---- what sources report (SourceOwner) ----

  contributed(): void {
    this.reducer.wake();
  }

  rankExited(src: ContributionSource, rank: number): void {
    if (this.opts.dead.isDead(rank) || !src.ranks.includes(rank)) return;
    if (this.opts.policy === 'strict')
      this.reducer.requestShutdown(
        `RankExit of live rank ${rank} (strict policy: clean shutdown of the reduce)`,
      );
    else this.opts.dead.declare(rank, 'exit');
  }

  /**
   * A wire error on a connection. strict does what flodl does: with a live
   * rank the error ends the reduce. elastic (lab-only) drops the host: its
   * connection closes and its ranks are declared dead; the message says so.
   */
  sourceFailed(src: ContributionSource, message: string, code: string, recordSeq?: number): void {
    const live = this.liveRanks(src).length > 0;
    const strict = this.opts.policy === 'strict';
    const what =
      !live || strict
        ? ''
        : ` (elastic policy, lab-only: host ${src.hostName} dropped and its ranks declared dead; flodl's reduce would end with this error)`;
    this.emit({
      type: 'error',
      message: `${src.hostName}: ${message}${what}`,
      code,
      host: src.host,
      recordSeq,
    });
    if (live && strict) this.reducer.requestShutdown(`wire error from ${src.hostName}: ${message}`, true);
    src.conn.destroy();
  }

  private liveRanks(src: ContributionSource): number[] {
    return src.ranks.filter((r) => !this.opts.dead.isDead(r));
  }

  /** A connection's peer is gone: strict shuts the reduce down, elastic declares its ranks dead. */
  private sourceClosed(src: ContributionSource): void {
    if (!src.open) return;
    src.open = false;
    if (this.reducer.stopping) return;
    const live = this.liveRanks(src);
    if (live.length > 0) {
      if (this.opts.policy === 'strict')
        this.reducer.requestShutdown(
          `connection of ${src.hostName} closed with live ranks [${live}] (strict policy)`,
        );
      else for (const r of live) this.opts.dead.declare(r, 'host-lost');
    }
    this.reducer.wake();
  }

  /** A committed read with no progress past the deadline: the peer is presumed gone (WIRE.md 6.2). */
  private checkStarvation(): void {
    const now = performance.now();
    for (const s of this.sources) {
      if (!s.open) continue;
      const err = s.checkStarvation(now, this.opts.starvationMs ?? COMMITTED_READ_STARVATION_MS);
      if (!err) continue;
      const seq = s.recorder.record({
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

  /** Stops the reduce loop and closes every connection. */
  stop(reason = 'stopped'): Promise<void> {
    this.reducer.requestShutdown(reason);
    for (const s of this.sources) s.conn.destroy();
    if (this.starveTimer) clearInterval(this.starveTimer);
    return this.reducer.stop();
  }
}
