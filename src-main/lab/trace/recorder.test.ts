import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import type { LabBatch } from '@shared/lab/contract';
import type { LinkView } from '@shared/lab/state';
import { Tap } from '../../engine/tap';
import { loadTrace, makeTraceHeader, TraceWriter } from './ndjson';
import { syntheticTraceLinks } from './links';
import { PcapngExporter } from './pcapng';
import { decodeIpv4Tcp, readPcapng } from './pcapng-reader';
import { TraceRecorder } from './recorder';
import { TraceReplay } from './replay';
import { DEFAULT_TOPOLOGY } from '@shared/lab/topology';
import { muxRecord, vectorBytes } from './testing/sample-session';

const LINK_INFO: Omit<LinkView, 'bytesUp' | 'bytesDown' | 'units'>[] = [
  { id: 'h0.uplink.data', from: 'h0', to: 'controller', channel: 'data', kind: 'uplink', host: 0 },
  { id: 'h0.r0.data', from: 'r0', to: 'h0', channel: 'data', kind: 'loopback', host: 0, rank: 0 },
];

/** A session's worth of tap traffic recorded through a real Tap into a trace, then loaded back. */
async function recordSession(snapLen = 64) {
  let clock = 0;
  const tap = new Tap({ snapLen, now: () => clock });
  const links = LINK_INFO.map((l) => tap.link(l));
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const header = makeTraceHeader({
    startedAt: 1_700_000_000_000,
    saltHex: '0102030405060708090a0b0c0d0e0f10',
    config: { ...DEFAULT_TOPOLOGY, ranksPerHost: [1] },
    links: syntheticTraceLinks(tap.linkViews()),
  });
  const rec = new TraceRecorder(new TraceWriter(out, header), () => clock).attachTap(tap);
  let listener: ((b: LabBatch) => void) | null = null;
  rec.attachEvents((l) => {
    listener = l;
    return () => (listener = null);
  });

  rec.command({ type: 'start' });
  clock = 1;
  tap.unit({
    link: links[1]!,
    dir: 'up',
    layer: 'handshake',
    kind: 'dataHandshake',
    length: 16,
    summary: 'hs',
    bytes: [vectorBytes('handshake data v3')],
  });
  clock = 2;
  const magic = Uint8Array.of(0xe1, 0x17, 0x0d, 0xf1);
  tap.unit({
    link: links[0]!,
    dir: 'up',
    layer: 'channelMagic',
    kind: 'DATA magic',
    length: 4,
    summary: 'magic',
    bytes: [magic],
  });
  clock = 3;
  // A model-sized HostFrame delivered in two pieces: the tap keeps snapLen bytes.
  const host = muxRecord(3, 0, new Uint8Array(300).fill(7));
  tap.unit({
    link: links[0]!,
    dir: 'up',
    layer: 'mux',
    kind: 'HostFrame',
    length: host.length,
    summary: 'HostFrame',
    bytes: [host.subarray(0, 25), host.subarray(25)],
  });
  // A link that appears after the header (a late leg): declared in the trace before its first record.
  const late = tap.link({
    id: 'h1.uplink.data',
    from: 'h1',
    to: 'controller',
    channel: 'data',
    kind: 'uplink',
    host: 1,
  });
  tap.unit({
    link: late,
    dir: 'up',
    layer: 'channelMagic',
    kind: 'DATA magic',
    length: 4,
    summary: 'magic',
    bytes: [magic],
  });
  // And a record handed over directly for a link no tap knows: its shape comes from its id.
  rec.record(
    {
      seq: 50,
      t: 3,
      link: 'h2.r5.control',
      dir: 'down',
      layer: 'handshake',
      kind: 'controlAck',
      length: 16,
      captured: 16,
      verdict: 'ok',
      summary: 'ack',
    },
    vectorBytes('handshake control ack v2'),
  );
  clock = 4;
  listener!({
    events: [
      {
        type: 'round',
        report: { round: 0, accepted: [0], verdict: 'ok', durationMs: 3, uplinkBytesPerHost: [329] },
      },
      { type: 'records', records: [], droppedBefore: 0 },
    ],
  });
  rec.command({ type: 'pauseRank', rank: 0 });
  rec.command({ type: 'getRecordBytes', seq: 0 });
  clock = 5;
  listener!({
    events: [
      {
        type: 'finding',
        finding: { id: 1, t: 5, severity: 'warn', kind: 'stalled', message: 'rank 0 stalled', ranks: [0] },
      },
      { type: 'links', links: tap.linkViews() },
    ],
  });
  rec.lifecycle({ action: 'faultApplied', link: 'h0.uplink.data', fault: { kind: 'slicer', pieceBytes: 3 } });
  clock = 6;
  await rec.close();
  expect(listener).toBeNull();
  return { trace: await loadTrace([Buffer.concat(chunks)]), host, magic };
}

describe('TraceRecorder and TraceReplay', () => {
  it('records tap units with their captured bytes, rounds, findings and lifecycle events', async () => {
    const { trace, host } = await recordSession();
    expect(trace.complete).toBe(true);
    expect(trace.events.map((e) => e.type)).toEqual([
      'lifecycle',
      'record',
      'record',
      'record',
      'link',
      'record',
      'link',
      'record',
      'round',
      'lifecycle',
      'finding',
      'links',
      'lifecycle',
      'end',
    ]);
    const declared = trace.events.filter((e) => e.type === 'link').map((e) => e.link);
    expect(declared[0]).toMatchObject({
      id: 'h1.uplink.data',
      kind: 'uplink',
      host: 1,
      serverPort: 1337,
      syntheticEndpoints: true,
    });
    expect(declared[1]).toMatchObject({
      id: 'h2.r5.control',
      kind: 'loopback',
      channel: 'control',
      host: 2,
      rank: 5,
      from: 'r5',
      to: 'h2',
    });
    expect(new Set([...trace.header.links, ...declared].map((l) => l.clientPort)).size).toBe(4);
    const recs = trace.events.filter((e) => e.type === 'record');
    const big = recs[2]!;
    expect(big.record).toMatchObject({ seq: 2, kind: 'HostFrame', length: host.length, captured: 64 });
    expect(Buffer.from(big.bytes).equals(Buffer.from(host.subarray(0, 64)))).toBe(true);
    expect(trace.events[9]).toMatchObject({ type: 'lifecycle', action: 'pauseRank', rank: 0, t: 4 });
    expect(trace.events[12]).toMatchObject({ action: 'faultApplied', fault: { kind: 'slicer' }, t: 5 });
    expect(trace.header.links.every((l) => l.syntheticEndpoints)).toBe(true);
  });

  it('steps to the next or previous unit, round report or finding, naming the unit', async () => {
    const { trace } = await recordSession();
    const replay = new TraceReplay(trace);
    replay.seek(0);
    // Records at t = 1, 2, 3, 3, 3; the round at 4; the finding at 5.
    expect(replay.stepTarget('unit', 1)).toEqual({ t: 1, seq: 0 });
    replay.seek(1);
    expect(replay.stepTarget('unit', 1)).toEqual({ t: 2, seq: 1 });
    expect(replay.stepTarget('unit', -1)).toBeNull();
    expect(replay.stepTarget('round', 1)).toEqual({ t: 4 });
    expect(replay.stepTarget('finding', 1)).toEqual({ t: 5 });
    replay.seek(6);
    expect(replay.stepTarget('unit', 1)).toBeNull();
    expect(replay.stepTarget('unit', -1)).toMatchObject({ t: 3 });
    expect(replay.stepTarget('round', -1)).toEqual({ t: 4 });
    expect(replay.stepTarget('finding', -1)).toEqual({ t: 5 });
    // Past the last finding the step wraps to the first, as a search does (a trace opens at its end).
    expect(replay.stepTarget('finding', 1)).toEqual({ t: 5 });
  });

  it("a finding step selects the finding's unit, takes findings sharing a time one by one and wraps", async () => {
    const { trace } = await recordSession();
    const at = trace.events.findIndex((e) => e.type === 'end');
    const finding = (id: number, t: number, recordSeq?: number) => ({
      type: 'finding' as const,
      t,
      finding: { id, t, severity: 'error' as const, kind: 'rejected' as const, message: `f${id}`, recordSeq },
    });
    // Written after the session's own (a reproduction's decisive unit is named once the run is judged).
    trace.events.splice(at, 0, finding(7, 3, 3), finding(8, 3, 4));
    const replay = new TraceReplay(trace);
    replay.seek(replay.duration);
    const step = (dir: 1 | -1) => {
      const target = replay.stepTarget('finding', dir);
      if (target) replay.seek(target.t);
      return target;
    };
    expect(step(1)).toEqual({ t: 3, seq: 3 });
    expect(step(1)).toEqual({ t: 3, seq: 4 });
    expect(step(1)).toEqual({ t: 5 });
    expect(step(1)).toEqual({ t: 3, seq: 3 });
    expect(step(-1)).toEqual({ t: 5 });
    expect(step(-1)).toEqual({ t: 3, seq: 4 });
  });

  it('replays the session at any time through the LabApi', async () => {
    const { trace, magic } = await recordSession();
    const replay = new TraceReplay(trace);
    expect(replay.duration).toBe(6);
    const seen: LabBatch[] = [];
    replay.subscribe((b) => seen.push(b));

    const early = replay.seek(2.5);
    expect(seen).toHaveLength(1);
    expect(early.events[0]).toMatchObject({
      type: 'snapshot',
      snapshot: { running: false, roundsCompleted: 0, ranks: [{ rank: 0, state: 'alive' }] },
    });
    expect(early.events[1]).toMatchObject({ type: 'records', records: [{ seq: 0 }, { seq: 1 }] });
    // The session's own link counters win where the trace has them.
    expect(replay.snapshotAt(100).links.map((l) => l.id)).toEqual([
      'h0.uplink.data',
      'h0.r0.data',
      'h1.uplink.data',
    ]);
    const snap = (early.events[0] as { snapshot: { links: LinkView[] } }).snapshot;
    expect(snap.links.find((l) => l.id === 'h0.uplink.data')).toMatchObject({ bytesUp: 4, units: 1 });

    const late = replay.seek(100);
    expect(replay.time).toBe(6);
    expect(late.events[0]).toMatchObject({
      snapshot: { roundsCompleted: 1, round: 1, ranks: [{ state: 'paused' }] },
    });
    // Each round report follows the counters at its time, added up from the units (replay-counters.ts).
    expect(late.events.map((e) => e.type)).toEqual([
      'snapshot',
      'records',
      'links',
      'round',
      'finding',
      'links',
      'links',
    ]);
    // State from a trace carries the trace's clock: the window measures rates on it.
    expect(late.events[0]).toMatchObject({ t: 6 });
    const roundT = replay.stepTarget('round', -1)?.t;
    expect(late.events.filter((e) => e.type === 'links').map((e) => (e as { t?: number }).t)).toEqual([
      roundT,
      5,
      6,
    ]);
    // Without a links event, the counters come from the records, late links included.
    const noCounters = new TraceReplay({ ...trace, events: trace.events.filter((e) => e.type !== 'links') });
    expect(noCounters.snapshotAt(100).links.map((l) => [l.id, l.bytesUp, l.bytesDown, l.units])).toEqual([
      ['h0.uplink.data', 4 + 325, 0, 2],
      ['h0.r0.data', 16, 0, 1],
      ['h1.uplink.data', 4, 0, 1],
      ['h2.r5.control', 0, 16, 1],
    ]);
    expect(replay.lifecycleUntil(6).map((e) => e.action)).toEqual(['start', 'pauseRank', 'faultApplied']);

    expect(await replay.command({ type: 'getRecordBytes', seq: 1 })).toEqual({
      ok: true,
      // The record too: a window whose ring let the unit go still shows it.
      record: expect.objectContaining({ seq: 1, kind: 'DATA magic', length: 4, captured: 4 }),
      bytes: {
        seq: 1,
        hex: Buffer.from(magic).toString('hex'),
        length: 4,
        captured: 4,
        saltHex: '0102030405060708090a0b0c0d0e0f10',
      },
    });
    expect(await replay.command({ type: 'getRecordBytes', seq: 99 })).toMatchObject({
      ok: false,
      error: 'NOT_FOUND',
    });
    expect(await replay.command({ type: 'killRank', rank: 0 })).toMatchObject({
      ok: false,
      error: 'OFFLINE',
    });
  });

  it('exports a recorded session to pcapng on the synthetic endpoints', async () => {
    const { trace, host } = await recordSession();
    const chunks: Uint8Array[] = [];
    const ex = new PcapngExporter(trace.header, (c) => chunks.push(c));
    for (const e of trace.events) ex.event(e);
    const packets = readPcapng(Uint8Array.from(Buffer.concat(chunks))).packets.map((p) =>
      decodeIpv4Tcp(p.data),
    );
    const uplink = trace.header.links.find((l) => l.id === 'h0.uplink.data')!;
    expect(uplink.serverPort).toBe(1337);
    const hostSeg = packets.find((p) => p.payloadLen === host.length)!;
    expect(hostSeg).toMatchObject({ dstPort: 1337, srcPort: uplink.clientPort });
    expect(hostSeg.payload.length).toBe(64);
    // The late links were exported as connections of their own.
    expect(ex.stats.connections).toBe(4);
  });
});

describe('TraceRecorder.command', () => {
  it('records a link fault set or cleared as its lifecycle line, as a kill or a pause is', async () => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    const header = makeTraceHeader({
      startedAt: 0,
      saltHex: '00'.repeat(16),
      config: { ...DEFAULT_TOPOLOGY, ranksPerHost: [2] },
      links: [],
    });
    let clock = 1;
    const rec = new TraceRecorder(new TraceWriter(out, header), () => clock);
    rec.command({
      type: 'setLinkFault',
      link: 'h0.r1.data',
      fault: { dir: 'both', sliceBytes: 7, sliceGapMs: 1 },
    });
    clock = 2;
    rec.command({ type: 'setLinkFault', link: 'h0.r1.data', fault: { dir: 'down', blackhole: true } });
    clock = 3;
    rec.command({ type: 'setLinkFault', link: 'h0.r1.data', fault: null });
    rec.command({ type: 'killRank', rank: 1 });
    await rec.close();
    const trace = await loadTrace([Buffer.concat(chunks)]);
    expect(trace.events.filter((e) => e.type === 'lifecycle')).toEqual([
      {
        type: 'lifecycle',
        t: 1,
        action: 'faultApplied',
        link: 'h0.r1.data',
        fault: { dir: 'both', sliceBytes: 7, sliceGapMs: 1, kind: 'slicer' },
      },
      {
        type: 'lifecycle',
        t: 2,
        action: 'faultApplied',
        link: 'h0.r1.data',
        dir: 'down',
        fault: { dir: 'down', blackhole: true, kind: 'blackhole' },
      },
      { type: 'lifecycle', t: 3, action: 'faultCleared', link: 'h0.r1.data' },
      { type: 'lifecycle', t: 3, action: 'killRank', rank: 1 },
    ]);
  });
});

describe('linkViewFromId', () => {
  it('reads the three link id shapes and refuses others', async () => {
    const { linkViewFromId } = await import('./links');
    expect(linkViewFromId('h0.uplink.control')).toMatchObject({
      kind: 'uplink',
      channel: 'control',
      host: 0,
      from: 'h0',
      to: 'controller',
    });
    expect(linkViewFromId('h3.r12.data')).toMatchObject({
      kind: 'loopback',
      channel: 'data',
      host: 3,
      rank: 12,
      from: 'r12',
      to: 'h3',
    });
    expect(linkViewFromId('r7.uplink.data')).toMatchObject({
      kind: 'uplink',
      rank: 7,
      from: 'r7',
      to: 'controller',
    });
    expect(linkViewFromId('h0.uplink')).toBeNull();
    expect(linkViewFromId('x.r1.data')).toBeNull();
  });
});
