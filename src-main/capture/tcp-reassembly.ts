// TCP reassembly of a capture, offline: segments grouped by connection and
// direction, ordered by sequence number (32-bit wrap handled relative to the
// stream's first byte), retransmitted and overlapping bytes taken once,
// holes (lost or uncaptured segments, a snap length) named as gaps, and a
// capture that starts after the SYN marked as mid-stream.
import { TCP_FIN, TCP_RST, TCP_SYN, TCP_ACK, type TcpSegment } from './capture-file';

export type StreamPiece = { time: number; data: Uint8Array } | { time: number; gap: number };

export interface TcpConnection {
  client: { addr: string; port: number };
  server: { addr: string; port: number };
  /** False when a SYN was seen: the bytes start at the stream's start. */
  midStream: boolean;
  /** Whether the client was known from a SYN (else guessed). */
  clientFromSyn: boolean;
  up: StreamPiece[];
  down: StreamPiece[];
  firstTime: number;
  /** How the connection ended, if the capture saw it. */
  closed?: { time: number; by: 'client' | 'server'; reset: boolean };
}

interface Half {
  addr: string;
  port: number;
  segs: TcpSegment[];
  syn: TcpSegment | null;
  fin: TcpSegment | null;
  rst: TcpSegment | null;
}

const endpoint = (a: string, p: number) => `${a}|${p}`;

export function reassemble(segments: TcpSegment[]): TcpConnection[] {
  const flows = new Map<string, Map<string, Half>>();
  for (const s of segments) {
    const a = endpoint(s.src, s.srcPort);
    const b = endpoint(s.dst, s.dstPort);
    const key = a < b ? `${a}>${b}` : `${b}>${a}`;
    let f = flows.get(key);
    if (!f) flows.set(key, (f = new Map()));
    let h = f.get(a);
    if (!h) f.set(a, (h = { addr: s.src, port: s.srcPort, segs: [], syn: null, fin: null, rst: null }));
    if (!f.has(b)) f.set(b, { addr: s.dst, port: s.dstPort, segs: [], syn: null, fin: null, rst: null });
    if (s.flags & TCP_SYN) h.syn ??= s;
    if (s.flags & TCP_FIN) h.fin ??= s;
    if (s.flags & TCP_RST) h.rst ??= s;
    h.segs.push(s);
  }
  const listening = new Set<string>();
  const uses = new Map<string, number>();
  for (const f of flows.values())
    for (const h of f.values()) {
      const e = endpoint(h.addr, h.port);
      if (h.syn && h.syn.flags & TCP_ACK) listening.add(e);
      uses.set(e, (uses.get(e) ?? 0) + 1);
    }
  const out: TcpConnection[] = [];
  for (const f of flows.values()) {
    // A self-connected socket (source endpoint = destination endpoint, as a TCP
    // simultaneous open to itself makes) has one half: its bytes form one stream,
    // taken as the client's, with an empty peer.
    const [x, y = emptyHalf(x)] = [...f.values()];
    const client = pickClient(x, y, listening, uses);
    const server = client === x ? y : x;
    const midStream = !(client.syn && server.syn);
    const conn: TcpConnection = {
      client: { addr: client.addr, port: client.port },
      server: { addr: server.addr, port: server.port },
      midStream,
      clientFromSyn: !!(client.syn || server.syn),
      up: piecesOf(client, server, midStream),
      down: piecesOf(server, client, midStream),
      firstTime: [...x.segs, ...y.segs].reduce((a, s) => Math.min(a, s.time), Infinity),
    };
    const ends = [
      client.rst && { time: client.rst.time, by: 'client' as const, reset: true },
      server.rst && { time: server.rst.time, by: 'server' as const, reset: true },
      client.fin && { time: client.fin.time, by: 'client' as const, reset: false },
      server.fin && { time: server.fin.time, by: 'server' as const, reset: false },
    ].filter((e) => !!e);
    if (ends.length) conn.closed = ends.sort((a, b) => a.time - b.time)[0];
    out.push(conn);
  }
  return out.sort((a, b) => a.firstTime - b.firstTime);
}

function emptyHalf(h: Half): Half {
  return { addr: h.addr, port: h.port, segs: [], syn: null, fin: null, rst: null };
}

/**
 * The dialing side: a pure SYN's sender; else the side not seen listening;
 * else the side whose address and port serve fewer connections (a listening
 * port serves several); else the higher port. The importer checks the guess
 * against what the bytes say (swapConnection).
 */
function pickClient(x: Half, y: Half, listening: Set<string>, uses: Map<string, number>): Half {
  if (x.syn && !(x.syn.flags & TCP_ACK)) return x;
  if (y.syn && !(y.syn.flags & TCP_ACK)) return y;
  const ex = endpoint(x.addr, x.port);
  const ey = endpoint(y.addr, y.port);
  const xl = listening.has(ex);
  const yl = listening.has(ey);
  if (xl !== yl) return xl ? y : x;
  const ux = uses.get(ex) ?? 0;
  const uy = uses.get(ey) ?? 0;
  if (ux !== uy) return ux > uy ? y : x;
  return x.port > y.port ? x : y;
}

/** The same connection seen from the other side (a wrong client guess). */
export function swapConnection(c: TcpConnection): TcpConnection {
  return {
    ...c,
    client: c.server,
    server: c.client,
    up: c.down,
    down: c.up,
    closed: c.closed && { ...c.closed, by: c.closed.by === 'client' ? 'server' : 'client' },
  };
}

/** One direction's bytes in order, each hole as a gap. */
function piecesOf(h: Half, peer: Half, midStream: boolean): StreamPiece[] {
  const withData = h.segs.filter((s) => s.payloadLen > 0);
  const ref = h.syn ? (h.syn.seq + 1) >>> 0 : withData.length ? withData[0].seq : 0;
  // Offsets relative to the stream's start (or first captured byte), signed across the 32-bit wrap.
  const rel = (seq: number) => (seq - ref) | 0;
  let base = 0;
  if (!h.syn) for (const s of withData) base = Math.min(base, rel(s.seq));
  const sorted = withData
    .map((s) => ({ s, at: rel(s.seq) - base }))
    .sort((a, b) => a.at - b.at || a.s.time - b.s.time);
  const out: StreamPiece[] = [];
  let next = 0;
  for (const { s, at } of sorted) {
    const end = at + s.payloadLen;
    if (end <= next) continue; // a retransmission of bytes already taken
    if (at > next) {
      out.push({ time: s.time, gap: at - next });
      next = at;
    }
    const from = next - at;
    const have = s.payload.subarray(Math.min(from, s.payload.length));
    if (have.length > 0) out.push({ time: s.time, data: have });
    next = at + from + have.length;
    // Bytes the IP header declares but the capture did not keep (snap length): a gap.
    if (next < end) {
      out.push({ time: s.time, gap: end - next });
      next = end;
    }
  }
  // Bytes lost at the end show as the FIN's sequence number, or as what the peer acknowledged.
  let endAt = h.fin ? rel(h.fin.seq) - base : next;
  let endTime = h.fin?.time ?? 0;
  for (const a of peer.segs) {
    if (!(a.flags & TCP_ACK)) continue;
    const acked = rel(a.ack) - base - (h.fin && a.ack === (h.fin.seq + 1) >>> 0 ? 1 : 0);
    // Only a plausible acknowledgment (ahead of what we have, by less than 1 GiB) counts.
    if (acked > endAt && acked - next < 2 ** 30) {
      endAt = acked;
      endTime = a.time;
    }
  }
  if (endAt > next && !(midStream && next === 0)) out.push({ time: endTime, gap: endAt - next });
  return out;
}
