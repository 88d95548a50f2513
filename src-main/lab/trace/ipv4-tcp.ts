// One IPv4 + TCP packet (RFC 791, RFC 793), as LINKTYPE_IPV4 carries it: no
// link-layer header. Checksums are the real ones so Wireshark's validation
// passes when it is switched on.
import { TraceError } from './errors';

export const IPV4_HEADER_LEN = 20;
export const TCP_HEADER_LEN = 20;
/** The largest TCP payload one IPv4 packet can carry (total length is a u16). */
export const MAX_TCP_PAYLOAD = 0xffff - IPV4_HEADER_LEN - TCP_HEADER_LEN;

export const TCP_FIN = 0x01;
export const TCP_SYN = 0x02;
export const TCP_RST = 0x04;
export const TCP_PSH = 0x08;
export const TCP_ACK = 0x10;

export function parseIpv4(addr: string): Uint8Array {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(addr);
  const parts = m ? m.slice(1).map(Number) : [];
  if (parts.length !== 4 || parts.some((p) => p > 255))
    throw new TraceError('BAD_LINK', `'${addr}' is not an IPv4 address`);
  return Uint8Array.from(parts);
}

/** RFC 1071 ones'-complement sum over the given pieces, folded and inverted. */
export function internetChecksum(...pieces: Uint8Array[]): number {
  let sum = 0;
  let odd: number | null = null;
  for (const p of pieces) {
    let i = 0;
    if (odd !== null && p.length > 0) {
      sum += (odd << 8) | p[0]!;
      odd = null;
      i = 1;
    }
    for (; i + 1 < p.length; i += 2) sum += (p[i]! << 8) | p[i + 1]!;
    if (i < p.length) odd = p[i]!;
    // Fold now and then so the sum stays a small integer.
    sum = (sum % 0x10000) + Math.floor(sum / 0x10000);
  }
  if (odd !== null) sum += odd << 8;
  while (sum > 0xffff) sum = (sum % 0x10000) + Math.floor(sum / 0x10000);
  return ~sum & 0xffff;
}

export interface TcpSegment {
  src: Uint8Array;
  dst: Uint8Array;
  srcPort: number;
  dstPort: number;
  seq: number;
  ack: number;
  flags: number;
  ipId: number;
  /** TCP options, already padded to a multiple of 4. */
  options?: Uint8Array;
  /** The payload bytes that were captured (a prefix of the real payload). */
  payload: Uint8Array;
  /** The real payload length on the wire (>= payload.length). */
  payloadLen: number;
}

export interface BuiltPacket {
  /** The captured packet bytes. */
  data: Uint8Array;
  /** The packet's real length (EPB original length). */
  origLen: number;
}

export function buildIpv4Tcp(seg: TcpSegment): BuiltPacket {
  const optLen = seg.options?.length ?? 0;
  const tcpLen = TCP_HEADER_LEN + optLen;
  const total = IPV4_HEADER_LEN + tcpLen + seg.payloadLen;
  if (total > 0xffff) throw new RangeError(`IPv4 packet of ${total} bytes exceeds 65535`);
  const headers = new Uint8Array(IPV4_HEADER_LEN + tcpLen);
  const dv = new DataView(headers.buffer);
  // IPv4: version 4, IHL 5, DSCP 0, total length, id, DF, TTL 64, protocol 6.
  headers[0] = 0x45;
  dv.setUint16(2, total);
  dv.setUint16(4, seg.ipId & 0xffff);
  dv.setUint16(6, 0x4000);
  headers[8] = 64;
  headers[9] = 6;
  headers.set(seg.src, 12);
  headers.set(seg.dst, 16);
  dv.setUint16(10, internetChecksum(headers.subarray(0, IPV4_HEADER_LEN)));
  // TCP.
  const t = IPV4_HEADER_LEN;
  dv.setUint16(t, seg.srcPort);
  dv.setUint16(t + 2, seg.dstPort);
  dv.setUint32(t + 4, seg.seq >>> 0);
  dv.setUint32(t + 8, seg.ack >>> 0);
  headers[t + 12] = (tcpLen / 4) << 4;
  headers[t + 13] = seg.flags;
  dv.setUint16(t + 14, 0xffff);
  if (seg.options) headers.set(seg.options, t + TCP_HEADER_LEN);
  if (seg.payload.length === seg.payloadLen) {
    const pseudo = new Uint8Array(12);
    pseudo.set(seg.src, 0);
    pseudo.set(seg.dst, 4);
    pseudo[9] = 6;
    new DataView(pseudo.buffer).setUint16(10, tcpLen + seg.payloadLen);
    dv.setUint16(t + 16, internetChecksum(pseudo, headers.subarray(t), seg.payload));
  }
  // A segment captured short keeps checksum 0: its bytes are not all known.
  const data = new Uint8Array(headers.length + seg.payload.length);
  data.set(headers, 0);
  data.set(seg.payload, headers.length);
  return { data, origLen: total };
}
