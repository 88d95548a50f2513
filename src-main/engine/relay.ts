// A per-host relay (WIRE.md 4.2-4.4, 4.7): loopback listeners for the host's
// ranks and one channel role per channel, each with its own upstream
// connection. The control channel is a pure byte router (ControlRouter); the
// data channel folds the host's rank frames into one HostFrame per round
// (FoldUplink, flodl 0.7) or, in the lab-only `forward` mode and the
// historical stale build, sends each rank frame up on its own (ForwardUplink).
// Single writers: the outbound queue is the sole writer upstream; the
// upstream reader is the sole writer of every rank socket.
import type net from 'node:net';
import { closeServer, listen, serverPort } from './conn';
import { ControlRouter } from './control-router';
import type { DataUplink } from './data-uplink';
import { FoldUplink } from './fold-uplink';
import { ForwardUplink } from './forward-uplink';
import type { RankAcceptor, RelayEvent, RelayOptions } from './relay-options';

export type { RankAcceptor, RelayEvent, RelayHistorical, RelayMode, RelayOptions } from './relay-options';

export class Relay {
  private dataServer?: net.Server;
  private controlServer?: net.Server;
  private acceptors!: { data: RankAcceptor; control: RankAcceptor };
  private readonly listeners = new Set<(e: RelayEvent) => void>();
  readonly data: DataUplink;
  readonly control: ControlRouter;
  private destroyed = false;

  private constructor(readonly opts: RelayOptions) {
    const emit = (e: RelayEvent) => this.emit(e);
    const staleBuild = !!opts.historical?.staleBuild;
    this.data =
      opts.mode === 'forward' || staleBuild
        ? new ForwardUplink(opts, emit, staleBuild)
        : new FoldUplink(opts, emit);
    this.control = new ControlRouter(opts, emit);
  }

  /** Binds both loopback listeners (ports in dataPort/controlPort, 0 = free). */
  static async listen(opts: RelayOptions): Promise<Relay> {
    const r = new Relay(opts);
    const addr = opts.listenAddress ?? '127.0.0.1';
    r.dataServer = await listen(addr, opts.dataPort ?? 0);
    r.controlServer = await listen(addr, opts.controlPort ?? 0);
    r.dataPort = serverPort(r.dataServer);
    r.controlPort = serverPort(r.controlServer);
    r.acceptors = { data: r.dataServer, control: r.controlServer };
    return r;
  }

  /** A relay whose ranks arrive through the given acceptors (in-memory pairs in unit tests; no ports). */
  static over(opts: RelayOptions, acceptors: { data: RankAcceptor; control: RankAcceptor }): Relay {
    const r = new Relay(opts);
    r.acceptors = acceptors;
    return r;
  }

  /** The loopback listeners' ports (kept after the listeners close once every rank is in). */
  dataPort = 0;
  controlPort = 0;

  on(listener: (e: RelayEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  private emit(e: RelayEvent): void {
    for (const l of this.listeners) l(e);
  }

  /** Accepts the host's ranks on both channels concurrently, then goes upstream on each. */
  async start(): Promise<void> {
    await Promise.all([this.data.start(this.acceptors.data), this.control.start(this.acceptors.control)]);
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
    this.acceptors?.data.close();
    this.acceptors?.control.close();
  }

  async close(): Promise<void> {
    this.destroy();
    await Promise.all([
      this.dataServer && closeServer(this.dataServer),
      this.controlServer && closeServer(this.controlServer),
    ]);
  }
}
