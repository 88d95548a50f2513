// The loopback legs of an external relay, where the lab owns neither end's
// socket: the ranks dial this tap and it dials the relay's loopback listener
// (controller port + 4 / + 5), forwarding every byte unchanged and in order.
// The lab holds both sockets as Conns, so the leg is a link like its own
// relay's (`h0.r1.data`): its bytes are counted, its units decoded from the
// side (src-main/capture/stream-decoder.ts) and recorded, and a link fault
// applies at the rank's end. The data legs' completed RoundFrames also give
// the order the relay's fold most likely merged them in (the relay reads
// what the tap wrote, in the order it wrote it).
import type net from 'node:net';
import type { Channel } from '@shared/lab/state';
import type { ControlIndexTable } from '@shared/wire/control-msg-tables';
import type { Mac } from '@shared/wire/mac';
import { StreamDecoder, type DecodedUnit } from '../capture/stream-decoder';
import { Conn, closeServer, connectWithRetry, listen, serverPort } from './conn';
import type { Tap, TapLink } from './tap';
import { loopbackLinkInfo } from './loopback-link';

export interface LoopbackTapOptions {
  host: number;
  hostName: string;
  channel: Exclude<Channel, 'http'>;
  /** The relay's loopback listener. */
  upstreamPort: number;
  mac: Mac;
  ceiling: number;
  controlVersion: number;
  indexTable?: ControlIndexTable;
  tap: Tap;
  /** How long a rank's connection waits for the relay to listen (it may bind late). */
  connectAttempts?: number;
  connectIntervalMs?: number;
  /** A data leg's k-th RoundFrame from `rank` arrived whole (k = the round, ranks send one per round). */
  onFrame?: (rank: number, k: number) => void;
  /** The first time a leg reached the relay's listener, ms after the tap started. */
  onConnected?: (afterMs: number) => void;
  onLog?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

class Leg {
  link: TapLink | null = null;
  private held: DecodedUnit[] = [];
  frames = 0;
  readonly decoder: StreamDecoder;

  constructor(
    private readonly o: LoopbackTapOptions,
    readonly rankConn: Conn,
  ) {
    this.decoder = new StreamDecoder({
      mac: o.mac,
      ceiling: o.ceiling,
      controlVersion: o.controlVersion,
      indexTable: o.indexTable,
      snapLen: o.tap.snapLen,
      onUnit: (u) => this.unit(u),
    });
  }

  observe(dir: 'up' | 'down', chunk: Uint8Array): void {
    try {
      this.decoder.push(dir, chunk, performance.now());
    } catch (e) {
      this.o.onLog?.('error', `tap of ${this.o.hostName} ${this.o.channel} leg: ${(e as Error).message}`);
    }
  }

  private unit(u: DecodedUnit): void {
    const rank = this.decoder.handshakeRank;
    if (!this.link && rank !== null) {
      const { hostName, host, channel } = this.o;
      this.link = this.o.tap.link(loopbackLinkInfo(host, hostName, rank, channel));
      if (!this.rankConn.counter.bound)
        this.rankConn.counter.bind(this.link, this.rankConn.endpoints, this.rankConn);
    }
    if (!this.link) {
      this.held.push(u);
      return;
    }
    for (const h of this.held.splice(0)) this.record(h);
    this.record(u);
  }

  private record(u: DecodedUnit): void {
    const rank = this.decoder.handshakeRank ?? undefined;
    this.o.tap.unit({
      link: this.link!,
      dir: u.dir,
      layer: u.layer,
      kind: u.kind,
      // As the engine's own relay records them: a handshake names its rank in the bytes.
      rank: u.layer === 'handshake' ? undefined : (u.rank ?? rank),
      length: u.length,
      verdict: u.verdict === 'ok' ? 'ok' : (u.code ?? 'BAD_PAYLOAD'),
      summary: u.verdict === 'ok' ? u.summary : `${u.summary}: ${u.message ?? u.code ?? ''}`,
      bytes: [u.bytes],
    });
    if (
      this.o.channel === 'data' &&
      u.dir === 'up' &&
      u.kind === 'RoundFrame' &&
      u.verdict === 'ok' &&
      rank !== undefined
    )
      this.o.onFrame?.(rank, this.frames++);
  }
}

export class LoopbackTap {
  private readonly legs = new Set<Leg>();
  private readonly conns = new Set<Conn>();
  private closed = false;
  /** A leg reached the relay's listener (the relay bound its loopback port). */
  upstreamSeen = false;
  private readonly startedAt = performance.now();

  private constructor(
    private readonly o: LoopbackTapOptions,
    private readonly server: net.Server,
  ) {
    server.on('connection', (s: net.Socket) => this.accept(s));
  }

  static async start(o: LoopbackTapOptions): Promise<LoopbackTap> {
    return new LoopbackTap(o, await listen('127.0.0.1', 0));
  }

  /** The port this host's ranks dial for this channel. */
  get port(): number {
    return serverPort(this.server);
  }

  private accept(socket: net.Socket): void {
    if (this.closed) return void socket.destroy();
    const rankConn = new Conn(socket, { readDir: 'up' });
    const leg = new Leg(this.o, rankConn);
    this.legs.add(leg);
    this.conns.add(rankConn);
    // The rank's bytes wait in its Conn until the relay's side is up.
    let relayConn: Conn | null = null;
    rankConn.onClose(() => {
      this.conns.delete(rankConn);
      leg.decoder.end('up', performance.now());
      if (relayConn) void relayConn.writer.end();
    });
    connectWithRetry('127.0.0.1', this.o.upstreamPort, {
      attempts: this.o.connectAttempts ?? 150,
      intervalMs: this.o.connectIntervalMs ?? 200,
    }).then(
      (s) => {
        if (!this.upstreamSeen) {
          this.upstreamSeen = true;
          this.o.onConnected?.(performance.now() - this.startedAt);
        }
        if (this.closed || rankConn.closed) return void s.destroy();
        const up = new Conn(s, { readDir: 'down' });
        relayConn = up;
        this.conns.add(up);
        up.onClose(() => {
          this.conns.delete(up);
          leg.decoder.end('down', performance.now());
          void rankConn.writer.end();
        });
        this.pipe(rankConn, up, 'up', leg);
        this.pipe(up, rankConn, 'down', leg);
      },
      (e: Error) => {
        this.o.onLog?.(
          'error',
          `relay ${this.o.hostName} never listened on its ${this.o.channel} loopback port ${this.o.upstreamPort}: ${e.message}`,
        );
        rankConn.destroy();
      },
    );
  }

  /** src -> dst with backpressure: src pauses while dst's queue is full. */
  private pipe(src: Conn, dst: Conn, dir: 'up' | 'down', leg: Leg): void {
    src.setConsumer((chunk) => {
      leg.observe(dir, chunk);
      if (!dst.send(chunk)) {
        src.pause('tap');
        void dst.writer.room().then(() => src.resume('tap'));
      }
    });
  }

  /** Kill host: every leg cut at once. */
  destroy(): void {
    this.closed = true;
    for (const c of this.conns) c.destroy();
    this.server.close();
  }

  async close(): Promise<void> {
    this.destroy();
    await closeServer(this.server).catch(() => {});
  }
}
