// The coordinator (control channel, WIRE.md 4.3): accepts the relays'
// control connections (or, in the lab-only direct mode, the ranks'), sends
// ControlFrames to ranks as rank-tagged Data records, reads TimingMsg from
// ranks, and declares a rank dead when its heartbeats stop for longer than
// the staleness. RankExit is informational: liveness is heartbeat-driven.
import { readU32LE } from '@shared/wire/bytes';
import { expectChannelMagic } from '@shared/wire/channel';
import { CONTROL_HANDSHAKE_MAGIC_RANK, MAX_CONTROL_PAYLOAD, REC_DATA } from '@shared/wire/constants';
import {
  decodeControlFrame,
  encodeControlFrame,
  MSG_KIND_CONTROL,
  MSG_KIND_TIMING,
} from '@shared/wire/control-frame';
import {
  decodeTimingMsg,
  encodeControlMsg,
  type ControlMsg,
  type TimingMsg,
} from '@shared/wire/control-msgs';
import { isWireError, type WireError } from '@shared/wire/errors';
import { encodeLenPrefix } from '@shared/wire/len-frame';
import type { Mac } from '@shared/wire/mac';
import { encodeMuxRecord, muxKindOfByte } from '@shared/wire/mux';
import { decodeRelayControl } from '@shared/wire/relay-control';
import type { ControlIndexTable } from '@shared/wire/control-msg-tables';
import type { Conn } from './conn';
import type { DeadRanks } from './dead-ranks';
import { LenFrameReader } from '@shared/wire/len-frame-reader';
import { MuxRecordStream } from './mux-stream';
import { acceptRankHandshake } from './rank-handshake';
import type { Tap } from './tap';
import { UplinkRecorder, hostIndexOf } from './uplink-recorder';

export interface CoordinatorOptions {
  worldSize: number;
  mac: Mac;
  controlVersion: number;
  /** The ControlMsgWire / TimingMsgWire indices the session speaks (default v2). */
  indexTable?: ControlIndexTable;
  dead: DeadRanks;
  stalenessMs: number;
  tap?: Tap;
  direct?: boolean;
  hostOfRank?: (rank: number) => number;
  helloTimeoutMs?: number;
  now?: () => number;
}

export type CoordinatorEvent =
  | { type: 'ready' }
  | { type: 'timing'; rank: number; msg: TimingMsg }
  | { type: 'stale'; rank: number; silentMs: number }
  | { type: 'error'; message: string; code?: string; recordSeq?: number };

interface Route {
  conn: Conn;
  units: UplinkRecorder;
  direct: boolean;
  hostName: string;
}

const CONTROL_CEILING = MAX_CONTROL_PAYLOAD + 64;

export class Coordinator {
  private readonly routes = new Map<number, Route>();
  private readonly lastSeen = new Map<number, number>();
  private readonly listeners = new Set<(e: CoordinatorEvent) => void>();
  private readonly conns = new Set<Conn>();
  private staleTimer: NodeJS.Timeout | null = null;
  private isReady = false;
  private nextIndex = 0;
  private readonly now: () => number;

  constructor(readonly opts: CoordinatorOptions) {
    this.now = opts.now ?? (() => performance.now());
  }

  on(l: (e: CoordinatorEvent) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  private emit(e: CoordinatorEvent): void {
    for (const l of this.listeners) l(e);
  }
  get ready(): boolean {
    return this.isReady;
  }

  attach(conn: Conn, head: Uint8Array): void {
    const index = this.nextIndex++;
    const units = new UplinkRecorder(this.opts.tap);
    this.conns.add(conn);
    conn.onClose(() => this.conns.delete(conn));
    const reject = (message: string, code = 'BAD_PAYLOAD') => {
      units.bind(conn, `conn${index}.uplink.control`, `connection ${index}`, 'control', -1);
      this.emit({ type: 'error', message, code });
      conn.destroy();
    };
    try {
      expectChannelMagic(head.subarray(0, 4), 'control');
    } catch (e) {
      return reject((e as Error).message, (e as WireError).code);
    }
    units.record({
      dir: 'up',
      layer: 'channelMagic',
      kind: 'CONTROL magic',
      length: 4,
      summary: 'channel magic CONTROL 0xF10D17E2',
      bytes: [head.subarray(0, 4)],
    });
    const timer = setTimeout(
      () => reject('no Hello within the Hello read timeout'),
      this.opts.helloTimeoutMs ?? 10_000,
    );
    conn.onClose(() => clearTimeout(timer));
    let acc: Uint8Array = head.subarray(4);
    const decide = (): boolean => {
      if (acc.length < 4) return false;
      conn.setConsumer(null);
      conn.unshift(acc);
      if (this.opts.direct && readU32LE(acc, 0) === CONTROL_HANDSHAKE_MAGIC_RANK)
        this.acceptDirect(conn, units, timer, reject);
      else this.readRelay(conn, units, index, timer, reject);
      return true;
    };
    if (!decide()) {
      conn.setConsumer((chunk) => {
        acc = Buffer.concat([acc, chunk]);
        decide();
      });
    }
  }

  private acceptDirect(
    conn: Conn,
    units: UplinkRecorder,
    timer: NodeJS.Timeout,
    reject: (m: string, c?: string) => void,
  ): void {
    acceptRankHandshake(conn, {
      channel: 'control',
      mac: this.opts.mac,
      version: this.opts.controlVersion,
      worldSize: this.opts.worldSize,
      check: (r) =>
        r >= this.opts.worldSize
          ? `rank ${r} out of range`
          : this.routes.has(r)
            ? `rank ${r} announced twice`
            : null,
      onUnit: (dir, b, verdict, summary, r) => {
        units.bind(conn, `r${r}.uplink.control`, `rank ${r}`, 'control', this.opts.hostOfRank?.(r) ?? -1, r);
        units.record({
          dir,
          layer: 'handshake',
          kind: dir === 'up' ? 'controlHandshake' : 'controlHandshakeAck',
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
        this.addRoute([rank], { conn, units, direct: true, hostName: `r${rank}` });
        const reader = new LenFrameReader({ ceiling: CONTROL_CEILING });
        conn.setConsumer((chunk) => {
          try {
            for (const unit of reader.push(chunk))
              this.fromRank(rank, LenFrameReader.blobOf(unit), units, 'lenframe', 4);
          } catch (e) {
            this.emit({
              type: 'error',
              message: `rank ${rank}: ${(e as Error).message}`,
              code: isWireError(e) ? e.code : undefined,
            });
            conn.destroy();
          }
        });
        conn.unshift(rest);
      },
      (e: Error) => reject(e.message),
    );
  }

  private readRelay(
    conn: Conn,
    units: UplinkRecorder,
    index: number,
    timer: NodeJS.Timeout,
    reject: (m: string, c?: string) => void,
  ): void {
    let helloDone = false;
    const failed = (e: Error) => {
      if (!helloDone) return reject(e.message, isWireError(e) ? e.code : undefined);
      const recordSeq = units.record({
        dir: 'up',
        layer: 'mux',
        kind: 'rejected',
        length: 0,
        verdict: (isWireError(e) ? e.code : 'BAD_PAYLOAD') as never,
        summary: e.message,
      });
      this.emit({
        type: 'error',
        message: e.message,
        code: isWireError(e) ? e.code : undefined,
        recordSeq,
      });
      conn.destroy();
    };
    new MuxRecordStream(conn, {
      mac: this.opts.mac,
      ceiling: CONTROL_CEILING,
      handler: {
        begin: () => null,
        end: (h, hdr, body) => {
          const payload = body!;
          const kind = muxKindOfByte(h.kind);
          const msg = kind === 'Control' ? decodeRelayControl(payload) : null;
          const length = hdr.length + payload.length;
          if (!helloDone) {
            clearTimeout(timer);
            if (msg?.type !== 'Hello') return reject(`first record must be Control(Hello), got ${kind}`);
            const { host, ranks } = msg;
            const bad = ranks.find((r) => r >= this.opts.worldSize);
            if (bad !== undefined)
              return reject(
                `Hello from ${host}: rank ${bad} out of range for world_size ${this.opts.worldSize}`,
              );
            const dup = ranks.find((r, i) => this.routes.has(r) || ranks.indexOf(r) !== i);
            if (dup !== undefined) return reject(`Hello from ${host}: rank ${dup} announced twice`);
            helloDone = true;
            units.bind(conn, `${host}.uplink.control`, `relay ${host}`, 'control', hostIndexOf(host, index));
            units.record({
              dir: 'up',
              layer: 'mux',
              kind: 'Hello',
              length,
              summary: `Hello host=${host} ranks=[${ranks}]`,
              bytes: [hdr, payload],
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
            this.addRoute(ranks, { conn, units, direct: false, hostName: host });
            return;
          }
          if (h.kind === REC_DATA) return this.fromRank(h.rank, payload, units, 'mux', hdr.length, hdr);
          const what = msg ? msg.type : (kind ?? 'unknown');
          const exitRank = msg?.type === 'RankExit' ? msg.rank : undefined;
          // RankExit is informational on this channel; other kinds are dropped.
          units.record({
            dir: 'up',
            layer: 'mux',
            kind: what,
            rank: exitRank,
            length,
            summary: `${what}${exitRank !== undefined ? ` rank=${exitRank}` : ''}`,
            bytes: [hdr, payload],
          });
        },
        fail: failed,
      },
    });
  }

  private fromRank(
    rank: number,
    frame: Uint8Array,
    units: UplinkRecorder,
    layer: 'mux' | 'lenframe',
    headLen: number,
    muxHeader?: Uint8Array,
  ): void {
    const length = frame.length + headLen;
    const bytes = muxHeader ? [muxHeader, frame] : [encodeLenPrefix(frame.length, CONTROL_CEILING), frame];
    try {
      const f = decodeControlFrame(frame, this.opts.mac, { version: this.opts.controlVersion });
      if (f.msgKind !== MSG_KIND_TIMING) {
        units.record({
          dir: 'up',
          layer,
          kind: 'Data',
          rank,
          length,
          summary: `ControlFrame kind ${f.msgKind} from rank ${rank}: dropped`,
          bytes,
        });
        return;
      }
      const msg = decodeTimingMsg(f.payload, { indexTable: this.opts.indexTable });
      units.record({
        dir: 'up',
        layer,
        kind: layer === 'mux' ? 'Data' : 'ControlFrame',
        rank,
        length,
        summary: `Timing ${msg.type} from rank ${rank}`,
        bytes,
      });
      this.lastSeen.set(rank, this.now());
      this.emit({ type: 'timing', rank, msg });
    } catch (e) {
      const code = isWireError(e) ? e.code : 'BAD_PAYLOAD';
      const recordSeq = units.record({
        dir: 'up',
        layer,
        kind: 'Data',
        rank,
        length,
        verdict: code as never,
        summary: `rejected ControlFrame from rank ${rank}: ${(e as Error).message}`,
        bytes,
      });
      this.emit({ type: 'error', message: `rank ${rank}: ${(e as Error).message}`, code, recordSeq });
    }
  }

  private addRoute(ranks: number[], route: Route): void {
    const t = this.now();
    for (const r of ranks) {
      this.routes.set(r, route);
      this.lastSeen.set(r, t);
    }
    if (this.routes.size === this.opts.worldSize && !this.isReady) {
      this.isReady = true;
      // Every rank's heartbeat clock starts now.
      for (const r of this.routes.keys()) this.lastSeen.set(r, this.now());
      this.staleTimer = setInterval(
        () => this.checkStaleness(),
        Math.min(100, Math.max(10, this.opts.stalenessMs / 10)),
      );
      this.emit({ type: 'ready' });
    }
  }

  private checkStaleness(): void {
    const now = this.now();
    for (const [rank, seen] of this.lastSeen) {
      if (this.opts.dead.isDead(rank)) continue;
      const silent = now - seen;
      if (silent > this.opts.stalenessMs) {
        this.opts.dead.declare(rank, 'stale');
        this.emit({ type: 'stale', rank, silentMs: silent });
      }
    }
  }

  /** Sends one ControlMsg to a rank; false when it has no route or its connection is gone. */
  send(rank: number, msg: ControlMsg): boolean {
    const route = this.routeOf(rank);
    if (!route) return false;
    const one = this.recordFor(rank, route, msg);
    route.conn.send(one);
    this.recordSent(rank, route, msg, one);
    return true;
  }

  /**
   * Best-effort broadcast: every rank is attempted even if an earlier send failed. The records for
   * the ranks behind one connection (a host's relay) go out as one write, as flodl's coordinator
   * writes them back to back: four SyncNow records were four writes, each its own TCP segment
   * and its own read at the relay, and the relay's last rank heard of the round about 0.3 ms
   * after its first.
   */
  broadcast(msg: ControlMsg, ranks?: number[]): number {
    const byConn = new Map<Conn, { route: Route; records: { rank: number; bytes: Uint8Array }[] }>();
    for (const rank of ranks ?? [...this.routes.keys()]) {
      const route = this.routeOf(rank);
      if (!route) continue;
      let batch = byConn.get(route.conn);
      if (!batch) byConn.set(route.conn, (batch = { route, records: [] }));
      batch.records.push({ rank, bytes: this.recordFor(rank, route, msg) });
    }
    let n = 0;
    for (const [conn, { route, records }] of byConn) {
      conn.send(records.length === 1 ? records[0].bytes : Buffer.concat(records.map((r) => r.bytes)));
      for (const r of records) this.recordSent(r.rank, route, msg, r.bytes);
      n += records.length;
    }
    return n;
  }

  /** The rank's route, or null when it has none or its connection is gone. */
  private routeOf(rank: number): Route | null {
    const route = this.routes.get(rank);
    return !route || route.conn.closed || route.conn.writer.error ? null : route;
  }

  /** One ControlMsg to `rank` as the bytes its route carries (a mux Data record, or len-framed when direct). */
  private recordFor(rank: number, route: Route, msg: ControlMsg): Uint8Array {
    const frame = encodeControlFrame(
      {
        version: this.opts.controlVersion,
        msgKind: MSG_KIND_CONTROL,
        payload: encodeControlMsg(msg, { indexTable: this.opts.indexTable }),
      },
      this.opts.mac,
    );
    const parts = route.direct
      ? [encodeLenPrefix(frame.length, CONTROL_CEILING), frame]
      : [encodeMuxRecord({ kind: 'Data', rank, payload: frame }, this.opts.mac)];
    // Small records are one write (WIRE.md 6.1 fix, part 1).
    return parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }

  private recordSent(rank: number, route: Route, msg: ControlMsg, bytes: Uint8Array): void {
    route.units.record({
      dir: 'down',
      layer: route.direct ? 'lenframe' : 'mux',
      kind: route.direct ? 'ControlFrame' : 'Data',
      rank,
      length: bytes.length,
      summary: `${msg.type} to rank ${rank}`,
      bytes: [bytes],
    });
  }

  /**
   * Resolves when every connection has closed (its relay closed it, as flodl's coordinator reads
   * until its relays close), or after `timeoutMs`; true when they all closed.
   */
  async whenClosed(timeoutMs: number): Promise<boolean> {
    const open = [...this.conns].filter((c) => !c.closed);
    if (open.length === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const all = Promise.all(open.map((c) => new Promise<void>((r) => c.onClose(() => r())))).then(() => true);
    const late = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs)));
    const closed = await Promise.race([all, late]);
    clearTimeout(timer);
    return closed;
  }

  stop(): void {
    if (this.staleTimer) clearInterval(this.staleTimer);
    this.staleTimer = null;
    for (const c of this.conns) c.destroy();
  }
}
