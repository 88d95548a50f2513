// Reads a capture file (classic pcap in either byte order, micro- or
// nanosecond; pcapng through the trace module's reader) down to TCP
// segments: link types Ethernet (with 802.1Q tags), Linux cooked v1 and v2,
// BSD loopback/null and OpenBSD loop, raw IP; IPv4 and IPv6. Anything else
// is counted as skipped, never an error: a capture holds other traffic too.
import { TraceError } from '../lab/trace/errors';
import { readPcapng } from '../lab/trace/pcapng-reader';

export const LINKTYPE = {
  NULL: 0,
  ETHERNET: 1,
  RAW: 101,
  LOOP: 108,
  LINUX_SLL: 113,
  IPV4: 228,
  IPV6: 229,
  LINUX_SLL2: 276,
} as const;

export interface TcpSegment {
  /** Epoch milliseconds. */
  time: number;
  src: string;
  srcPort: number;
  dst: string;
  dstPort: number;
  seq: number;
  /** Acknowledgment number (meaningful with TCP_ACK in flags). */
  ack: number;
  flags: number;
  /** The payload length the IP header declares (more than payload.length when captured short). */
  payloadLen: number;
  payload: Uint8Array;
}

export const TCP_FIN = 0x01;
export const TCP_SYN = 0x02;
export const TCP_RST = 0x04;
export const TCP_ACK = 0x10;

export interface CaptureContents {
  format: 'pcap' | 'pcapng';
  packets: number;
  segments: TcpSegment[];
  /** Packets that are not TCP over IP on a known link type. */
  skipped: number;
}

export interface RawPacket {
  time: number;
  linkType: number;
  data: Uint8Array;
}

export function readCapture(file: Uint8Array): CaptureContents {
  if (file.length < 24)
    throw new TraceError('BAD_PCAPNG', `a capture file is at least 24 bytes, got ${file.length}`);
  const dv = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const magic = dv.getUint32(0, true);
  let raw: RawPacket[];
  let format: 'pcap' | 'pcapng';
  if (magic === 0x0a0d0d0a) {
    format = 'pcapng';
    const f = readPcapng(file);
    raw = f.packets.map((p) => {
      const itf = f.interfaces[p.interfaceId];
      return { time: (Number(p.timestamp) / itf.tsPerSecond) * 1000, linkType: itf.linkType, data: p.data };
    });
  } else {
    format = 'pcap';
    raw = readPcap(file, dv, magic);
  }
  const segments: TcpSegment[] = [];
  let skipped = 0;
  for (const p of raw) {
    const seg = segmentOf(p);
    if (seg) segments.push(seg);
    else skipped++;
  }
  return { format, packets: raw.length, segments, skipped };
}

function readPcap(file: Uint8Array, dv: DataView, magic: number): RawPacket[] {
  let le: boolean;
  if (magic === 0xa1b2c3d4 || magic === 0xa1b23c4d) le = true;
  else if (magic === 0xd4c3b2a1 || magic === 0x4d3cb2a1) le = false;
  else throw new TraceError('BAD_PCAPNG', `not a pcap or pcapng file (magic 0x${magic.toString(16)})`);
  const m = dv.getUint32(0, le);
  const nano = m === 0xa1b23c4d;
  const linkType = dv.getUint32(20, le) & 0x0fffffff;
  const out: RawPacket[] = [];
  let at = 24;
  while (at + 16 <= file.length) {
    const sec = dv.getUint32(at, le);
    const frac = dv.getUint32(at + 4, le);
    const capLen = dv.getUint32(at + 8, le);
    if (at + 16 + capLen > file.length) break; // a capture cut while writing: keep what is whole
    out.push({
      time: sec * 1000 + (nano ? frac / 1e6 : frac / 1e3),
      linkType,
      data: file.subarray(at + 16, at + 16 + capLen),
    });
    at += 16 + capLen;
  }
  return out;
}

/** The IP packet inside a link-layer frame, or null. */
function ipOf(linkType: number, d: Uint8Array): Uint8Array | null {
  const dv = new DataView(d.buffer, d.byteOffset, d.byteLength);
  let etherType: number;
  let at: number;
  switch (linkType) {
    case LINKTYPE.ETHERNET:
      if (d.length < 14) return null;
      etherType = dv.getUint16(12);
      at = 14;
      while ((etherType === 0x8100 || etherType === 0x88a8) && d.length >= at + 4) {
        etherType = dv.getUint16(at + 2);
        at += 4;
      }
      break;
    case LINKTYPE.LINUX_SLL:
      if (d.length < 16) return null;
      etherType = dv.getUint16(14);
      at = 16;
      break;
    case LINKTYPE.LINUX_SLL2:
      if (d.length < 20) return null;
      etherType = dv.getUint16(0);
      at = 20;
      break;
    case LINKTYPE.NULL:
    case LINKTYPE.LOOP: {
      if (d.length < 4) return null;
      // The address family in the writer's byte order (NULL) or network order (LOOP): 2 = IPv4, 24/28/30 = IPv6.
      const fam =
        linkType === LINKTYPE.LOOP
          ? dv.getUint32(0)
          : dv.getUint32(0, true) > 0xffff
            ? dv.getUint32(0)
            : dv.getUint32(0, true);
      return fam === 2 || fam === 24 || fam === 28 || fam === 30 ? d.subarray(4) : null;
    }
    case LINKTYPE.RAW:
    case LINKTYPE.IPV4:
    case LINKTYPE.IPV6:
      return d;
    default:
      return null;
  }
  return etherType === 0x0800 || etherType === 0x86dd ? d.subarray(at) : null;
}

/** The TCP segment in one captured packet, or null when it is not TCP over IP on a known link type. */
export function segmentOf(p: RawPacket): TcpSegment | null {
  const ip = ipOf(p.linkType, p.data);
  if (!ip || ip.length < 20) return null;
  const dv = new DataView(ip.buffer, ip.byteOffset, ip.byteLength);
  const version = ip[0] >> 4;
  let src: string;
  let dst: string;
  let tcpAt: number;
  let ipEnd: number;
  if (version === 4) {
    if (ip[9] !== 6) return null;
    const ihl = (ip[0] & 0x0f) * 4;
    // A fragment other than the first carries no TCP header.
    if ((dv.getUint16(6) & 0x1fff) !== 0) return null;
    src = ip.subarray(12, 16).join('.');
    dst = ip.subarray(16, 20).join('.');
    tcpAt = ihl;
    ipEnd = dv.getUint16(2) || ip.length;
  } else if (version === 6) {
    if (ip.length < 40) return null;
    let next = ip[6];
    tcpAt = 40;
    // Skip hop-by-hop, routing and destination options headers.
    while ((next === 0 || next === 43 || next === 60) && ip.length >= tcpAt + 8) {
      next = ip[tcpAt];
      tcpAt += (ip[tcpAt + 1] + 1) * 8;
    }
    if (next !== 6) return null;
    src = v6(ip.subarray(8, 24));
    dst = v6(ip.subarray(24, 40));
    ipEnd = 40 + dv.getUint16(4);
  } else return null;
  if (ip.length < tcpAt + 20) return null;
  const dataAt = tcpAt + (ip[tcpAt + 12] >> 4) * 4;
  const payloadLen = Math.max(0, ipEnd - dataAt);
  return {
    time: p.time,
    src,
    srcPort: dv.getUint16(tcpAt),
    dst,
    dstPort: dv.getUint16(tcpAt + 2),
    seq: dv.getUint32(tcpAt + 4),
    ack: dv.getUint32(tcpAt + 8),
    flags: ip[tcpAt + 13],
    payloadLen,
    payload: ip.subarray(Math.min(dataAt, ip.length), Math.min(ipEnd, ip.length)),
  };
}

function v6(b: Uint8Array): string {
  const dv = new DataView(b.buffer, b.byteOffset, 16);
  const groups = Array.from({ length: 8 }, (_, i) => dv.getUint16(i * 2).toString(16));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}
