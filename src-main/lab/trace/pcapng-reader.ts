// A small pcapng reader: enough to check what pcapng.ts writes (and to read
// simple captures back) without Wireshark. Little- and big-endian sections,
// SHB/IDB/EPB; other block types are skipped. IPv4/TCP decoding included.
import { TraceError } from './errors';
import { BLOCK_EPB, BLOCK_IDB, BLOCK_SHB, BYTE_ORDER_MAGIC } from './pcapng-blocks';
import { internetChecksum } from './ipv4-tcp';

export interface PcapngInterface {
  linkType: number;
  snapLen: number;
  name?: string;
  /** Timestamp units per second (10^6 unless if_tsresol says otherwise). */
  tsPerSecond: number;
}

export interface PcapngPacket {
  /** Index in PcapngFile.interfaces (across sections: see readPcapng). */
  interfaceId: number;
  /** Timestamp in the interface's units. */
  timestamp: bigint;
  data: Uint8Array;
  origLen: number;
  comments: string[];
}

export interface PcapngFile {
  userAppl?: string;
  interfaces: PcapngInterface[];
  packets: PcapngPacket[];
}

const utf8 = new TextDecoder();

function options(bytes: Uint8Array, le: boolean): Map<number, Uint8Array[]> {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Map<number, Uint8Array[]>();
  let at = 0;
  while (at + 4 <= bytes.length) {
    const code = dv.getUint16(at, le);
    const len = dv.getUint16(at + 2, le);
    if (code === 0) break;
    if (at + 4 + len > bytes.length) throw new TraceError('BAD_PCAPNG', `option ${code} runs past its block`);
    const list = out.get(code) ?? [];
    list.push(bytes.subarray(at + 4, at + 4 + len));
    out.set(code, list);
    at += 4 + ((len + 3) & ~3);
  }
  return out;
}

export function readPcapng(file: Uint8Array): PcapngFile {
  const dv = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const result: PcapngFile = { interfaces: [], packets: [] };
  let le = true;
  let at = 0;
  // A file may hold several sections (captures joined with cat or mergecap), each
  // numbering its own interfaces from 0: a packet's interfaceId here is its index in
  // the file's list, the section's first interface plus the id the packet gives.
  let sectionBase = 0;
  while (at < file.length) {
    if (at + 12 > file.length) throw new TraceError('BAD_PCAPNG', `block at ${at} is cut short`);
    const type = dv.getUint32(at, true);
    if (type === BLOCK_SHB) {
      const bom = dv.getUint32(at + 8, true);
      if (bom === BYTE_ORDER_MAGIC) le = true;
      else if (bom === 0x4d3c2b1a) le = false;
      else throw new TraceError('BAD_PCAPNG', `bad byte-order magic at ${at}`);
      sectionBase = result.interfaces.length;
    } else if (at === 0) {
      throw new TraceError('BAD_PCAPNG', 'a pcapng file starts with a Section Header Block');
    }
    const total = dv.getUint32(at + 4, le);
    if (total < 12 || total % 4 !== 0 || at + total > file.length)
      throw new TraceError('BAD_PCAPNG', `block at ${at} has bad length ${total}`);
    if (dv.getUint32(at + total - 4, le) !== total)
      throw new TraceError('BAD_PCAPNG', `block at ${at}: trailing length differs`);
    const body = file.subarray(at + 8, at + total - 4);
    const bdv = new DataView(body.buffer, body.byteOffset, body.byteLength);
    if (type === BLOCK_SHB) {
      const appl = options(body.subarray(16), le).get(4)?.[0];
      if (appl) result.userAppl = utf8.decode(appl);
    } else if (type === BLOCK_IDB) {
      const opts = options(body.subarray(8), le);
      const res = opts.get(9)?.[0]?.[0] ?? 6;
      const tsPerSecond = res & 0x80 ? 2 ** (res & 0x7f) : 10 ** res;
      const name = opts.get(2)?.[0];
      result.interfaces.push({
        linkType: bdv.getUint16(0, le),
        snapLen: bdv.getUint32(4, le),
        tsPerSecond,
        name: name && utf8.decode(name),
      });
    } else if (type === BLOCK_EPB) {
      const capLen = bdv.getUint32(12, le);
      if (20 + capLen > body.length)
        throw new TraceError('BAD_PCAPNG', `packet at ${at} claims ${capLen} bytes past its block`);
      const localId = bdv.getUint32(0, le);
      const interfaceId = sectionBase + localId;
      if (interfaceId >= result.interfaces.length)
        throw new TraceError(
          'BAD_PCAPNG',
          `packet at ${at} names interface ${localId} of its section, not described`,
        );
      const comments = (options(body.subarray(20 + ((capLen + 3) & ~3)), le).get(1) ?? []).map((c) =>
        utf8.decode(c),
      );
      result.packets.push({
        interfaceId,
        timestamp: (BigInt(bdv.getUint32(4, le)) << 32n) | BigInt(bdv.getUint32(8, le)),
        data: body.subarray(20, 20 + capLen),
        origLen: bdv.getUint32(16, le),
        comments,
      });
    }
    at += total;
  }
  return result;
}

export interface DecodedTcp {
  src: string;
  dst: string;
  srcPort: number;
  dstPort: number;
  seq: number;
  ack: number;
  flags: number;
  /** IPv4 total length minus headers: the real payload length. */
  payloadLen: number;
  /** The captured payload (may be shorter than payloadLen). */
  payload: Uint8Array;
  ipChecksumOk: boolean;
  /** null when the payload was captured short and cannot be checked. */
  tcpChecksumOk: boolean | null;
}

const dotted = (b: Uint8Array): string => Array.from(b).join('.');

/** Decodes a LINKTYPE_IPV4 packet carrying TCP. */
export function decodeIpv4Tcp(data: Uint8Array): DecodedTcp {
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (data.length < 40 || data[0]! >> 4 !== 4 || data[9] !== 6)
    throw new TraceError('BAD_PCAPNG', 'not an IPv4/TCP packet');
  const ihl = (data[0]! & 0x0f) * 4;
  const total = dv.getUint16(2);
  const tcpLen = (data[ihl + 12]! >> 4) * 4;
  const payloadLen = total - ihl - tcpLen;
  const payload = data.subarray(ihl + tcpLen);
  let tcpChecksumOk: boolean | null = null;
  if (payload.length === payloadLen) {
    const pseudo = new Uint8Array(12);
    pseudo.set(data.subarray(12, 20), 0);
    pseudo[9] = 6;
    new DataView(pseudo.buffer).setUint16(10, total - ihl);
    tcpChecksumOk = internetChecksum(pseudo, data.subarray(ihl, total)) === 0;
  }
  return {
    src: dotted(data.subarray(12, 16)),
    dst: dotted(data.subarray(16, 20)),
    srcPort: dv.getUint16(ihl),
    dstPort: dv.getUint16(ihl + 2),
    seq: dv.getUint32(ihl + 4),
    ack: dv.getUint32(ihl + 8),
    flags: data[ihl + 13]!,
    payloadLen,
    payload,
    ipChecksumOk: internetChecksum(data.subarray(0, ihl)) === 0,
    tcpChecksumOk,
  };
}
