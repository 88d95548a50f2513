// TCP streams put back together from captured segments as they arrive, for
// the passive tap: one connection per client address and port toward the
// watched server port, its bytes handed on in order per direction. A capture
// on loopback sees each segment once and in order; what it does not see (a
// ring that filled, a capture started mid-connection) is named, never
// papered over: a hole in the sequence is passed on as a gap of its size,
// a retransmission is trimmed to what is new.
import type { Direction } from '@shared/lab/state';
import { TCP_ACK, TCP_FIN, TCP_RST, TCP_SYN, type TcpSegment } from './capture-file';
import type { ConnEndpoints } from './link-naming';

/** What a live stream's bytes go to (a TappedConnection does all of it). */
export interface StreamSink {
  observe(dir: Direction, bytes: Uint8Array, t: number): void;
  lost(dir: Direction, bytes: number, t: number): void;
  ended(dir: Direction, by: 'client' | 'server', reset: boolean, t: number): void;
  dispose(): void;
}

interface LiveConn {
  sink: StreamSink;
  next: Record<Direction, number | null>;
  done: Record<Direction, boolean>;
}

/** Sequence numbers wrap at 2^32: the signed distance from `from` to `to`. */
const seqDelta = (to: number, from: number) => (to - from) | 0;

export class LiveTcpStreams {
  private readonly conns = new Map<string, LiveConn>();

  constructor(
    private readonly server: { host: string; port: number },
    private readonly open: (ends: ConnEndpoints) => StreamSink,
    /** Capture time (epoch ms) to the tap's own clock. */
    private readonly clock: (epochMs: number) => number,
  ) {}

  get size(): number {
    return this.conns.size;
  }

  segment(s: TcpSegment): void {
    const up = s.dstPort === this.server.port && s.dst === this.server.host;
    const down = s.srcPort === this.server.port && s.src === this.server.host;
    if (up === down) return; // neither end is the watched server (or both are: not a peer's link)
    const dir: Direction = up ? 'up' : 'down';
    const clientAddr = up ? s.src : s.dst;
    const clientPort = up ? s.srcPort : s.dstPort;
    const key = `${clientAddr}:${clientPort}`;
    const t = this.clock(s.time);
    let c = this.conns.get(key);
    const syn = (s.flags & TCP_SYN) !== 0;
    if (syn && up && (s.flags & TCP_ACK) === 0 && c) {
      // The same client port again: the old connection is over, whatever the capture saw of its end.
      this.close(key, c, t);
      c = undefined;
    }
    if (!c) {
      // A connection starts at its SYN, or (joined late) at its first bytes: a bare ACK, FIN or
      // RST of one not open here (the last ACK after both FINs) starts nothing.
      if (!syn && s.payloadLen === 0) return;
      c = {
        sink: this.open({
          clientAddr,
          clientPort,
          serverAddr: this.server.host,
          serverPort: this.server.port,
        }),
        next: { up: null, down: null },
        done: { up: false, down: false },
      };
      this.conns.set(key, c);
    }
    if (syn) {
      c.next[dir] = (s.seq + 1) >>> 0;
      return;
    }
    this.data(c, dir, s, t);
    if ((s.flags & TCP_RST) !== 0) {
      for (const d of ['up', 'down'] as const)
        if (!c.done[d]) {
          c.done[d] = true;
          c.sink.ended(d, dir === 'up' ? 'client' : 'server', true, t);
        }
    } else if ((s.flags & TCP_FIN) !== 0 && !c.done[dir]) {
      c.done[dir] = true;
      c.sink.ended(dir, dir === 'up' ? 'client' : 'server', false, t);
    }
    if (c.done.up && c.done.down) {
      c.sink.dispose();
      this.conns.delete(key);
    }
  }

  /** The capture is over: every connection still open ends here. */
  closeAll(t: number): void {
    for (const [key, c] of this.conns) this.close(key, c, t);
  }

  private data(c: LiveConn, dir: Direction, s: TcpSegment, t: number): void {
    // A connection the capture joined late starts where its first segment does.
    const expected = c.next[dir] ?? s.seq;
    const ahead = seqDelta(s.seq, expected);
    if (s.payloadLen === 0) {
      // A FIN or RST past what was seen: the bytes between never reached the capture.
      if (ahead > 0 && (s.flags & (TCP_FIN | TCP_RST)) !== 0) c.sink.lost(dir, ahead, t);
      return;
    }
    if (ahead > 0) c.sink.lost(dir, ahead, t); // segments the capture never saw
    // A retransmission counts only past what was already had; bytes the capture cut short (a snap
    // length) are a gap, not a shorter stream.
    const fresh = ahead >= 0 ? s.payloadLen : Math.max(0, s.payloadLen + ahead);
    const bytes = ahead >= 0 ? s.payload : s.payload.subarray(Math.min(s.payload.length, -ahead));
    if (bytes.length > 0) c.sink.observe(dir, bytes, t);
    if (fresh > bytes.length) c.sink.lost(dir, fresh - bytes.length, t);
    const end = (s.seq + s.payloadLen) >>> 0;
    if (c.next[dir] === null || seqDelta(end, expected) > 0) c.next[dir] = end;
  }

  private close(key: string, c: LiveConn, t: number): void {
    for (const d of ['up', 'down'] as const)
      if (!c.done[d]) c.sink.ended(d, d === 'up' ? 'client' : 'server', false, t);
    c.sink.dispose();
    this.conns.delete(key);
  }
}
