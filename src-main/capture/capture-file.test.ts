// Capture files written here byte by byte, one small flodl uplink in each:
// every supported link type (Ethernet with a VLAN tag, Linux cooked v1 and
// v2, BSD null, OpenBSD loop, raw IP), IPv4 and IPv6, classic pcap in both
// byte orders and with nanosecond stamps, and pcapng. Each must import to
// the same five units; a corrupt file gets a named error.
import { describe, expect, it } from 'vitest';
import { encodeChannelMagic } from '@shared/wire/channel';
import { encodeMuxRecord } from '@shared/wire/mux';
import { encodeRoundFrame } from '@shared/wire/round-frame';
import { tensorFromValues } from '@shared/wire/tensor';
import { saltFromHex } from '@shared/wire/salt';
import { nodeMac } from '../crypto/node-mac';
import { isTraceError } from '../lab/trace/errors';
import { importCapture, writeImportTrace } from './import-capture';
import { PassThrough } from 'node:stream';
import { loadTrace } from '../lab/trace/ndjson';
import { TraceReplay } from '../lab/trace/replay';
import { LINKTYPE, TCP_ACK, TCP_SYN } from './capture-file';

const mac = nodeMac(saltFromHex('0f0e0d0c0b0a09080706050403020100'));
const frame = encodeRoundFrame(
  {
    roundKind: 0,
    weight: 2,
    tensors: [
      tensorFromValues(
        0,
        [300],
        Array.from({ length: 300 }, (_, i) => i),
      ),
    ],
  },
  mac,
);
const UP = [
  encodeChannelMagic('data'),
  encodeMuxRecord({ kind: 'Control', msg: { type: 'Hello', host: 'h3', ranks: [6, 7] } }, mac),
  encodeMuxRecord({ kind: 'HostFrame', payload: frame }, mac),
];
const DOWN = [
  encodeMuxRecord({ kind: 'Control', msg: { type: 'HelloAck' } }, mac),
  encodeMuxRecord({ kind: 'Broadcast', payload: frame }, mac),
];

interface Seg {
  fromClient: boolean;
  seq: number;
  ack?: number;
  flags: number;
  payload: Uint8Array;
}

/** A connection as segments: handshake, the up units, the down units, each unit split in 2 segments. */
function segments(): Seg[] {
  const segs: Seg[] = [
    { fromClient: true, seq: 1000, flags: TCP_SYN, payload: new Uint8Array(0) },
    { fromClient: false, seq: 0xfffffff0, ack: 1001, flags: TCP_SYN | TCP_ACK, payload: new Uint8Array(0) },
  ];
  // The server's sequence numbers wrap past 2^32 on purpose.
  const next = { c: 1001, s: 0xfffffff1 };
  const push = (fromClient: boolean, b: Uint8Array) => {
    for (const part of [b.subarray(0, Math.ceil(b.length / 2)), b.subarray(Math.ceil(b.length / 2))]) {
      if (!part.length) continue;
      const k = fromClient ? 'c' : 's';
      segs.push({
        fromClient,
        seq: next[k] >>> 0,
        ack: next[fromClient ? 's' : 'c'] >>> 0,
        flags: TCP_ACK,
        payload: part,
      });
      next[k] += part.length;
    }
  };
  push(true, UP[0]);
  push(true, UP[1]);
  push(false, DOWN[0]);
  push(true, UP[2]);
  push(false, DOWN[1]);
  // The client's last acknowledgment covers everything the server sent, and the reverse.
  segs.push({
    fromClient: true,
    seq: next.c >>> 0,
    ack: next.s >>> 0,
    flags: TCP_ACK,
    payload: new Uint8Array(0),
  });
  segs.push({
    fromClient: false,
    seq: next.s >>> 0,
    ack: next.c >>> 0,
    flags: TCP_ACK,
    payload: new Uint8Array(0),
  });
  return segs;
}

function tcp(s: Seg): Uint8Array {
  const t = Buffer.alloc(20 + s.payload.length);
  t.writeUInt16BE(s.fromClient ? 40001 : 1337, 0);
  t.writeUInt16BE(s.fromClient ? 1337 : 40001, 2);
  t.writeUInt32BE(s.seq, 4);
  t.writeUInt32BE(s.ack ?? 0, 8);
  t[12] = 5 << 4;
  t[13] = s.flags;
  Buffer.from(s.payload).copy(t, 20);
  return t;
}

function ip(v6: boolean, s: Seg): Uint8Array {
  const body = tcp(s);
  if (!v6) {
    const h = Buffer.alloc(20);
    h[0] = 0x45;
    h.writeUInt16BE(20 + body.length, 2);
    h[8] = 64;
    h[9] = 6;
    Buffer.from(s.fromClient ? [10, 0, 0, 1] : [10, 0, 0, 2]).copy(h, 12);
    Buffer.from(s.fromClient ? [10, 0, 0, 2] : [10, 0, 0, 1]).copy(h, 16);
    return Buffer.concat([h, body]);
  }
  const h = Buffer.alloc(40);
  h[0] = 0x60;
  h.writeUInt16BE(body.length, 4);
  h[6] = 6;
  h[7] = 64;
  h[23] = s.fromClient ? 1 : 2;
  h[39] = s.fromClient ? 2 : 1;
  h[8] = h[24] = 0xfd;
  return Buffer.concat([h, body]);
}

function linkFrame(linkType: number, v6: boolean, packet: Uint8Array): Uint8Array {
  const ethType = v6 ? 0x86dd : 0x0800;
  switch (linkType) {
    case LINKTYPE.ETHERNET: {
      const h = Buffer.alloc(18);
      h.writeUInt16BE(0x8100, 12); // an 802.1Q tag before the real EtherType
      h.writeUInt16BE(ethType, 16);
      return Buffer.concat([h, packet]);
    }
    case LINKTYPE.LINUX_SLL: {
      const h = Buffer.alloc(16);
      h.writeUInt16BE(ethType, 14);
      return Buffer.concat([h, packet]);
    }
    case LINKTYPE.LINUX_SLL2: {
      const h = Buffer.alloc(20);
      h.writeUInt16BE(ethType, 0);
      return Buffer.concat([h, packet]);
    }
    case LINKTYPE.NULL: {
      const h = Buffer.alloc(4);
      h.writeUInt32LE(v6 ? 30 : 2, 0);
      return Buffer.concat([h, packet]);
    }
    case LINKTYPE.LOOP: {
      const h = Buffer.alloc(4);
      h.writeUInt32BE(v6 ? 24 : 2, 0);
      return Buffer.concat([h, packet]);
    }
    default:
      return packet;
  }
}

function pcap(
  linkType: number,
  v6: boolean,
  order: { le: boolean; nano: boolean },
  segs = segments(),
): Uint8Array {
  const u32 = (b: Buffer, v: number, at: number) =>
    order.le ? b.writeUInt32LE(v, at) : b.writeUInt32BE(v, at);
  const head = Buffer.alloc(24);
  u32(head, order.nano ? 0xa1b23c4d : 0xa1b2c3d4, 0);
  head.writeUInt16LE(2, order.le ? 4 : 5);
  u32(head, 262144, 16);
  u32(head, linkType, 20);
  const recs = segs.map((s, i) => {
    const data = linkFrame(linkType, v6, ip(v6, s));
    const h = Buffer.alloc(16);
    u32(h, 1_767_000_000, 0);
    u32(h, order.nano ? i * 1000_000 : i * 1000, 4);
    u32(h, data.length, 8);
    u32(h, data.length, 12);
    return Buffer.concat([h, data]);
  });
  return Buffer.concat([head, ...recs]);
}

function pcapng(linkType: number, v6: boolean): Uint8Array {
  const block = (type: number, body: Buffer) => {
    const len = 12 + ((body.length + 3) & ~3);
    const b = Buffer.alloc(len);
    b.writeUInt32LE(type, 0);
    b.writeUInt32LE(len, 4);
    body.copy(b, 8);
    b.writeUInt32LE(len, len - 4);
    return b;
  };
  const shb = Buffer.alloc(16);
  shb.writeUInt32LE(0x1a2b3c4d, 0);
  shb.writeUInt16LE(1, 4);
  shb.writeBigInt64LE(-1n, 8);
  const idb = Buffer.alloc(8);
  idb.writeUInt16LE(linkType, 0);
  idb.writeUInt32LE(262144, 4);
  const epbs = segments().map((s, i) => {
    const data = Buffer.from(linkFrame(linkType, v6, ip(v6, s)));
    const h = Buffer.alloc(20);
    const ts = 1_767_000_000_000_000n + BigInt(i * 1000);
    h.writeUInt32LE(Number(ts >> 32n), 4);
    h.writeUInt32LE(Number(ts & 0xffffffffn), 8);
    h.writeUInt32LE(data.length, 12);
    h.writeUInt32LE(data.length, 16);
    return block(6, Buffer.concat([h, data]));
  });
  return Buffer.concat([block(0x0a0d0d0a, shb), block(1, idb), ...epbs]);
}

const expected = [
  'h3.uplink.data up channelMagic DATA magic ok',
  'h3.uplink.data up mux Hello ok',
  'h3.uplink.data down mux HelloAck ok',
  'h3.uplink.data up mux HostFrame ok',
  'h3.uplink.data down mux Broadcast ok',
];
const summary = (file: Uint8Array) =>
  importCapture(file, { mac }).streams.flatMap((s) =>
    s.units.map((u) => `${s.link.id} ${u.dir} ${u.layer} ${u.kind} ${u.verdict}`),
  );

describe('capture files of every supported kind', () => {
  const types = ['ETHERNET', 'LINUX_SLL', 'LINUX_SLL2', 'NULL', 'LOOP', 'RAW'] as const;
  for (const t of types)
    for (const v6 of [false, true])
      it(`pcap, ${t}, IPv${v6 ? 6 : 4}`, () => {
        expect(summary(pcap(LINKTYPE[t], v6, { le: true, nano: false }))).toEqual(expected);
      });

  it('pcap in big-endian byte order with nanosecond stamps', () => {
    expect(summary(pcap(LINKTYPE.ETHERNET, false, { le: false, nano: true }))).toEqual(expected);
  });

  it('pcapng, Linux cooked v2 and IPv6', () => {
    expect(summary(pcapng(LINKTYPE.LINUX_SLL2, true))).toEqual(expected);
  });

  it('out-of-order and duplicated segments reassemble; a missing one is a gap of its size', () => {
    const segs = segments();
    const shuffled = [segs[0], segs[1], segs[3], segs[2], ...segs.slice(4), segs[5]];
    expect(summary(pcap(LINKTYPE.ETHERNET, false, { le: true, nano: false }, shuffled))).toEqual(expected);
    // Drop the second half of the HostFrame.
    const hostFrameTail = segs.findIndex(
      (s, i) => i > 0 && s.fromClient && s.payload.length > 0 && s.seq > 1001 + UP[0].length + UP[1].length,
    );
    const lost = segs.filter((_, i) => i !== hostFrameTail);
    const units = importCapture(pcap(LINKTYPE.ETHERNET, false, { le: true, nano: false }, lost), { mac })
      .streams[0].units;
    const gap = units.find((u) => u.verdict === 'gap')!;
    expect(gap.length).toBe(segs[hostFrameTail].payload.length);
    expect(units.find((u) => u.kind === 'HostFrame')!.code).toBe('TRUNCATED');
  });

  it('a wrong salt: the stream is still found, every MAC-bearing unit named HMAC_MISMATCH', () => {
    const r = importCapture(pcap(LINKTYPE.ETHERNET, false, { le: true, nano: false }), {
      mac: nodeMac(new Uint8Array(16)),
    });
    expect(r.streams.length).toBe(1);
    expect(r.streams[0].units.map((u) => `${u.kind} ${u.verdict} ${u.code ?? ''}`.trim())).toEqual([
      'DATA magic ok',
      'Hello undecodable HMAC_MISMATCH',
      'HelloAck undecodable HMAC_MISMATCH',
      'HostFrame undecodable HMAC_MISMATCH',
      'Broadcast undecodable HMAC_MISMATCH',
    ]);
  });

  it('the imported trace opens in the window replay: links, bytes and records at the end of the timeline', async () => {
    const r = importCapture(pcap(LINKTYPE.LINUX_SLL, false, { le: true, nano: false }), { mac });
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (b: Buffer) => chunks.push(b));
    expect(await writeImportTrace(r, mac.salt, out, 64 * 1024)).toBe(5);
    const trace = await loadTrace(chunks);
    expect(trace.complete).toBe(true);
    // Hosts 0..2 are not in the capture: the last of them holds ranks 0..5 so that h3's are 6 and 7.
    expect(trace.header.config.ranksPerHost).toEqual([0, 0, 6, 2]);
    const replay = new TraceReplay(trace);
    const snap = replay.snapshotAt(replay.duration);
    const link = snap.links.find((l) => l.id === 'h3.uplink.data')!;
    expect(link).toMatchObject({ host: 3, channel: 'data', kind: 'uplink', units: 5 });
    expect(link.bytesUp).toBe(UP.reduce((a, b) => a + b.length, 0));
    expect(link.bytesDown).toBe(DOWN.reduce((a, b) => a + b.length, 0));
    expect(snap.ranks.filter((x) => x.host === 3).map((x) => x.rank)).toEqual([6, 7]);
  });

  it('the imported trace records the control index table it was decoded with (v2 when not named)', async () => {
    const r = importCapture(pcap(LINKTYPE.LINUX_SLL, false, { le: true, nano: false }), {
      mac,
      indexTable: 'v2-late',
    });
    const tableOf = async (indexTable?: 'v2-late') => {
      const out = new PassThrough();
      const chunks: Buffer[] = [];
      out.on('data', (b: Buffer) => chunks.push(b));
      await writeImportTrace(r, mac.salt, out, 64 * 1024, indexTable);
      return (await loadTrace(chunks)).header.config.controlIndexTable;
    };
    expect(await tableOf('v2-late')).toBe('v2-late');
    expect(await tableOf()).toBe('v2');
  });

  it('a file that is no capture gets a named error', () => {
    let err: unknown;
    try {
      importCapture(new Uint8Array(64).fill(7), { mac });
    } catch (e) {
      err = e;
    }
    expect(isTraceError(err) && err.code).toBe('BAD_PCAPNG');
  });
});
