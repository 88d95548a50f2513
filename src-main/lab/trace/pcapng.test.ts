import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TraceEvent } from './format';
import { MAX_TCP_PAYLOAD, TCP_ACK, TCP_FIN, TCP_PSH, TCP_RST, TCP_SYN, internetChecksum } from './ipv4-tcp';
import { TraceWriter } from './ndjson';
import { exportTraceFileToPcapng, PcapngExporter, type PcapngOptions } from './pcapng';
import { decodeIpv4Tcp, readPcapng, type DecodedTcp } from './pcapng-reader';
import { LINKS, sampleEvents, sampleHeader, sampleUnits, STARTED_AT } from './testing/sample-session';

/** The sample without its model-sized unit, for exports at tiny MSS. */
const smallEvents = (): TraceEvent[] => sampleEvents(sampleUnits().filter((u) => u.bytes.length < 100_000));

function exportSample(
  events: TraceEvent[] = sampleEvents(),
  opts?: PcapngOptions,
): { file: Uint8Array; stats: PcapngExporter['stats'] } {
  const chunks: Uint8Array[] = [];
  const ex = new PcapngExporter(sampleHeader(), (c) => chunks.push(c), opts);
  for (const e of events) ex.event(e);
  return { file: Uint8Array.from(Buffer.concat(chunks)), stats: ex.stats };
}

interface Packet extends DecodedTcp {
  ts: bigint;
  origLen: number;
  capLen: number;
  comments: string[];
}

function packetsOf(file: Uint8Array): Packet[] {
  const pcap = readPcapng(file);
  expect(pcap.interfaces).toEqual([
    { linkType: 228, snapLen: 65535, tsPerSecond: 1_000_000, name: 'relay-lab loopback' },
  ]);
  return pcap.packets.map((p) => ({
    ...decodeIpv4Tcp(p.data),
    ts: p.timestamp,
    origLen: p.origLen,
    capLen: p.data.length,
    comments: p.comments,
  }));
}

/** The bytes each direction of a link carried, in order, rebuilt from the packets by sequence number. */
function streams(packets: Packet[], clientPort: number): { up: Buffer; down: Buffer } {
  const up = packets.filter((p) => p.srcPort === clientPort && p.payloadLen > 0);
  const down = packets.filter((p) => p.dstPort === clientPort && p.payloadLen > 0);
  const join = (ps: Packet[]): Buffer => {
    // Each segment's sequence number must be the previous one's plus its length.
    for (let i = 1; i < ps.length; i++)
      expect(ps[i]!.seq).toBe((ps[i - 1]!.seq + ps[i - 1]!.payloadLen) >>> 0);
    return Buffer.concat(ps.map((p) => p.payload));
  };
  return { up: join(up), down: join(down) };
}

describe('pcapng export', () => {
  it('writes a section, one raw-IPv4 interface and packets with correct checksums', () => {
    const { file, stats } = exportSample();
    const pcap = readPcapng(file);
    expect(pcap.userAppl).toContain('relay-lab');
    const packets = packetsOf(file);
    expect(packets.length).toBe(stats.packets);
    expect(stats).toMatchObject({ units: sampleUnits().length, shortUnits: 1, connections: LINKS.length });
    for (const p of packets) {
      expect(p.ipChecksumOk).toBe(true);
      expect(p.src).toBe('127.0.0.1');
      expect(p.origLen).toBeLessThanOrEqual(65535);
      // Whole segments have a checked TCP checksum; only the short unit's are unknown.
      if (p.capLen === p.origLen) expect(p.tcpChecksumOk).toBe(true);
    }
    expect(packets.filter((p) => p.tcpChecksumOk === null).length).toBeGreaterThan(0);
  });

  it('opens each link with a handshake between its real endpoints', () => {
    const packets = packetsOf(exportSample().file);
    for (const link of LINKS) {
      const mine = packets.filter((p) => p.srcPort === link.clientPort || p.dstPort === link.clientPort);
      const [syn, synAck, ack, first] = mine;
      expect(syn).toMatchObject({
        flags: TCP_SYN,
        srcPort: link.clientPort,
        dstPort: link.serverPort,
        payloadLen: 0,
      });
      expect(synAck).toMatchObject({
        flags: TCP_SYN | TCP_ACK,
        srcPort: link.serverPort,
        ack: (syn!.seq + 1) >>> 0,
      });
      expect(ack).toMatchObject({ flags: TCP_ACK, seq: (syn!.seq + 1) >>> 0, ack: (synAck!.seq + 1) >>> 0 });
      expect(first!.seq).toBe((syn!.seq + 1) >>> 0);
      // The handshake sits just before the first unit.
      expect(syn!.ts < first!.ts && first!.ts - syn!.ts <= 3n).toBe(true);
    }
  });

  it('carries every unit byte for byte, in order, per direction', () => {
    const packets = packetsOf(exportSample(smallEvents(), { mss: 13 }).file);
    for (const link of LINKS) {
      const units = sampleUnits().filter(
        (u) => u.link === link.id && u.captured === undefined && u.bytes.length < 100_000,
      );
      const want = (dir: string): Buffer =>
        Buffer.concat(units.filter((u) => u.dir === dir).map((u) => u.bytes));
      const got = streams(packets, link.clientPort);
      if (link.id === 'h0.uplink.data') {
        // The short Broadcast went down this link: compare the up direction only.
        expect(got.up.equals(want('up'))).toBe(true);
      } else {
        expect(got.up.equals(want('up'))).toBe(true);
        expect(got.down.equals(want('down'))).toBe(true);
      }
    }
  });

  it('acknowledges what the other side has sent so far', () => {
    const packets = packetsOf(exportSample().file);
    const link = LINKS.find((l) => l.id === 'h0.r0.data')!;
    const mine = packets.filter(
      (p) => (p.srcPort === link.clientPort || p.dstPort === link.clientPort) && p.payloadLen > 0,
    );
    // Unit 2 (the ack, down) acknowledges the 16-byte handshake sent up.
    expect(mine[1]!.ack).toBe((mine[0]!.seq + 16) >>> 0);
    expect(mine[2]!.ack).toBe((mine[1]!.seq + 8) >>> 0);
  });

  it('splits a unit into MSS-sized segments, PSH on the last', () => {
    const big = sampleUnits().find((u) => u.bytes.length > 100_000)!;
    const packets = packetsOf(exportSample().file).filter(
      (p) => p.srcPort === 47003 && p.payloadLen > MAX_TCP_PAYLOAD - 1,
    );
    const segs = Math.ceil(big.bytes.length / MAX_TCP_PAYLOAD);
    expect(packets.length).toBe(segs - 1);
    for (const p of packets) {
      expect(p.origLen).toBe(65535);
      expect(p.flags).toBe(TCP_ACK);
    }
    const small = packetsOf(exportSample(smallEvents(), { mss: 10 }).file);
    const hello = small.filter((p) => p.comments.some((c) => c.includes('#6 ')));
    expect(hello.length).toBe(1);
    const idx = small.indexOf(hello[0]!);
    // 34 bytes at MSS 10: 10, 10, 10, 4.
    expect(small.slice(idx, idx + 4).map((p) => [p.payloadLen, p.flags])).toEqual([
      [10, TCP_ACK],
      [10, TCP_ACK],
      [10, TCP_ACK],
      [4, TCP_ACK | TCP_PSH],
    ]);
    expect(() => exportSample(sampleEvents(), { mss: MAX_TCP_PAYLOAD + 1 })).toThrow(RangeError);
  });

  it('writes a unit captured short with its real length and keeps the stream in line', () => {
    const packets = packetsOf(exportSample().file);
    const shortUnit = sampleUnits().find((u) => u.captured !== undefined)!;
    const first = packets.find((p) => p.comments.some((c) => c.includes('captured 40 of')))!;
    expect(first.payloadLen).toBe(shortUnit.bytes.length);
    expect(first.payload.length).toBe(40);
    expect(Buffer.from(first.payload).equals(Buffer.from(shortUnit.bytes.subarray(0, 40)))).toBe(true);
    expect(first.origLen).toBe(40 + shortUnit.bytes.length);
    expect(first.tcpChecksumOk).toBeNull();
    // A short unit spanning several segments keeps its prefix in the first, one byte short of it.
    const segmented = packetsOf(exportSample(smallEvents(), { mss: 16 }).file);
    const i = segmented.findIndex((p) => p.comments.some((c) => c.includes('captured 40 of')));
    expect(segmented.slice(i, i + 3).map((p) => [p.payloadLen, p.payload.length])).toEqual([
      [16, 15],
      [16, 0],
      [16, 0],
    ]);
  });

  it('timestamps packets at startedAt + t in microseconds, with a comment per unit', () => {
    const packets = packetsOf(exportSample().file);
    const hello = packets.find((p) =>
      p.comments.some((c) => c.startsWith('relay-lab #6 h0.uplink.data up mux/Hello')),
    )!;
    const t = (
      sampleEvents().find((e) => e.type === 'record' && e.record.seq === 6) as TraceEvent & { type: 'record' }
    ).t;
    expect(hello.ts).toBe(BigInt(Math.round((STARTED_AT + t) * 1000)));
    expect(packets.filter((p) => p.comments.length > 0).length).toBe(sampleUnits().length);
  });

  it('closes links with FIN or RST, and reopens on later traffic', () => {
    const events = sampleEvents();
    const reopen = events.find(
      (e) => e.type === 'record' && e.record.link === 'h0.r0.data',
    )! as TraceEvent & { type: 'record' };
    const last = events.at(-1)!.t;
    events.push({ ...reopen, t: last + 1, record: { ...reopen.record, seq: 999, t: last + 1 } });
    const { file, stats } = exportSample(events);
    const packets = packetsOf(file);
    const fin = packets.filter((p) => p.flags & TCP_FIN);
    expect(fin.map((p) => p.srcPort)).toEqual([47001, 1341]);
    const rst = packets.filter((p) => p.flags & TCP_RST);
    expect(rst.map((p) => p.srcPort)).toEqual([1337]);
    expect(rst[0]!.dstPort).toBe(47004);
    expect(stats.connections).toBe(LINKS.length + 1);
    expect(packets.filter((p) => p.flags === TCP_SYN && p.srcPort === 47001).length).toBe(2);
  });

  it('exports the same bytes for the same trace', () => {
    expect(Buffer.from(exportSample().file).equals(Buffer.from(exportSample().file))).toBe(true);
  });

  it('names a record on an unknown link and an unusable address', () => {
    const rec = sampleEvents().find((e) => e.type === 'record')! as TraceEvent & { type: 'record' };
    const ex = new PcapngExporter(sampleHeader(), () => {});
    expect(() => ex.event({ ...rec, record: { ...rec.record, link: 'h9.nowhere' } }, 7)).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_LINK', line: 7 }),
    );
    const bad = new PcapngExporter(sampleHeader([{ ...LINKS[0]!, clientAddr: '::1' }]), () => {});
    expect(() => bad.event(rec)).toThrow(expect.objectContaining({ code: 'BAD_LINK' }));
  });

  it('computes the RFC 1071 checksum of the RFC example', () => {
    // RFC 1071 section 3: 00 01 f2 03 f4 f5 f6 f7 sums to 0xddf2, so the checksum is 0x220d.
    expect(internetChecksum(Uint8Array.of(0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7))).toBe(0x220d);
    // The same split at an odd boundary.
    expect(
      internetChecksum(Uint8Array.of(0x00, 0x01, 0xf2), Uint8Array.of(0x03, 0xf4, 0xf5, 0xf6, 0xf7)),
    ).toBe(0x220d);
  });

  it('exports a trace file to a pcapng file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relay-lab-pcapng-'));
    const trace = join(dir, 's.ndjson');
    const w = TraceWriter.toFile(trace, sampleHeader());
    for (const e of sampleEvents()) if (e.type !== 'end') w.write(e);
    await w.close();
    const stats = await exportTraceFileToPcapng(trace, join(dir, 's.pcapng'));
    expect(stats).toMatchObject({ units: sampleUnits().length, truncatedTail: false });
    expect(Buffer.from(readFileSync(join(dir, 's.pcapng'))).equals(Buffer.from(exportSample().file))).toBe(
      true,
    );
  });

  it('rejects a file that is not pcapng', () => {
    expect(() => readPcapng(Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12))).toThrow(
      expect.objectContaining({ code: 'BAD_PCAPNG' }),
    );
    const { file } = exportSample();
    expect(() => readPcapng(file.subarray(0, file.length - 2))).toThrow(
      expect.objectContaining({ code: 'BAD_PCAPNG' }),
    );
  });
});
