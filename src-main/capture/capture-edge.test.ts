// Captures that are legal but unusual (issue 34): a TCP segment whose source
// endpoint is its destination (a socket connected to itself), with and
// without its SYN, and a pcapng of two sections (two captures joined with
// cat or mergecap), each numbering its interfaces from 0. Each imports.
import { describe, expect, it } from 'vitest';
import { encodeChannelMagic } from '@shared/wire/channel';
import { encodeMuxRecord } from '@shared/wire/mux';
import { saltFromHex } from '@shared/wire/salt';
import { nodeMac } from '../crypto/node-mac';
import { buildIpv4Tcp, parseIpv4, TCP_ACK, TCP_SYN } from '../lab/trace/ipv4-tcp';
import {
  enhancedPacketBlock,
  interfaceDescriptionBlock,
  sectionHeaderBlock,
} from '../lab/trace/pcapng-blocks';
import { readPcapng } from '../lab/trace/pcapng-reader';
import { LINKTYPE } from './capture-file';
import { importCapture } from './import-capture';

const mac = nodeMac(saltFromHex('0f0e0d0c0b0a09080706050403020100'));
const HELLO = Buffer.concat([
  encodeChannelMagic('data'),
  encodeMuxRecord({ kind: 'Control', msg: { type: 'Hello', host: 'h0', ranks: [0, 1] } }, mac),
]);

interface Seg {
  src: [string, number];
  dst: [string, number];
  seq: number;
  flags: number;
  payload?: Uint8Array;
}

function packet(s: Seg): Uint8Array {
  const payload = s.payload ?? new Uint8Array(0);
  return buildIpv4Tcp({
    src: parseIpv4(s.src[0]),
    dst: parseIpv4(s.dst[0]),
    srcPort: s.src[1],
    dstPort: s.dst[1],
    seq: s.seq,
    ack: 0,
    flags: s.flags,
    ipId: 1,
    payload,
    payloadLen: payload.length,
  }).data;
}

/** One pcapng section: its header, one raw-IPv4 interface (id 0), the packets. */
function section(segs: Seg[], t0: number): Buffer {
  return Buffer.concat([
    sectionHeaderBlock('capture-edge test'),
    interfaceDescriptionBlock(LINKTYPE.IPV4, 65535, 'lo'),
    ...segs.map((s, i) => {
      const data = packet(s);
      return enhancedPacketBlock(0, t0 + i * 1000, data, data.length);
    }),
  ]);
}

const opts = { mac };
const self: [string, number] = ['127.0.0.1', 40000];

describe('unusual captures import', () => {
  it('a self-connected segment with data is one stream, not a TypeError', () => {
    const file = section(
      [{ src: self, dst: self, seq: 100, flags: TCP_ACK, payload: HELLO }],
      1_767_000_000_000_000,
    );
    const r = importCapture(file, opts);
    expect(r.tcpConnections).toBe(1);
    expect(r.packets).toBe(1);
  });

  it("a self-connected socket's SYN (and SYN-ACK) imports", () => {
    const file = section(
      [
        { src: self, dst: self, seq: 99, flags: TCP_SYN },
        { src: self, dst: self, seq: 99, flags: TCP_SYN | TCP_ACK },
        { src: self, dst: self, seq: 100, flags: TCP_ACK, payload: HELLO },
      ],
      1_767_000_000_000_000,
    );
    const r = importCapture(file, opts);
    expect(r.tcpConnections).toBe(1);
  });

  it('a pcapng of two sections reads each packet with its own section interface', () => {
    const a = section(
      [{ src: ['10.0.0.1', 40001], dst: ['10.0.0.2', 1337], seq: 1, flags: TCP_ACK, payload: HELLO }],
      1_767_000_000_000_000,
    );
    const b = section(
      [{ src: ['10.0.0.3', 40002], dst: ['10.0.0.2', 1337], seq: 1, flags: TCP_ACK, payload: HELLO }],
      1_767_000_001_000_000,
    );
    const joined = Buffer.concat([a, b]);
    const f = readPcapng(joined);
    expect(f.interfaces).toHaveLength(2);
    expect(f.packets.map((p) => p.interfaceId)).toEqual([0, 1]);
    const r = importCapture(joined, opts);
    expect(r.format).toBe('pcapng');
    expect(r.packets).toBe(2);
    expect(r.tcpConnections).toBe(2);
    expect(r.streams).toHaveLength(2);
  });

  it('a packet naming an interface its own section lacks is refused in words', () => {
    const a = section([], 0);
    const bad = Buffer.concat([
      sectionHeaderBlock('second'),
      enhancedPacketBlock(0, 0, packet({ src: self, dst: self, seq: 1, flags: TCP_SYN }), 40),
    ]);
    expect(() => readPcapng(Buffer.concat([a, bad]))).toThrow(/names interface 0 of its section/);
  });
});
