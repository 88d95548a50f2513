// A small, fully known session for the trace tests: the wire vectors
// (fixtures/wire-vectors.json, copied from the spec's vectors) placed on the
// links where flodl sends them, plus frames built here with their real MACs.
// Bytes are built independently of the project's codec on purpose, so the
// trace tests do not depend on it.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DEFAULT_TOPOLOGY } from '@shared/lab/topology';
import type { UnitLayer, UnitRecord } from '@shared/lab/records';
import type { Direction } from '@shared/lab/state';
import type { RecordEvent, TraceEvent, TraceHeader, TraceLink } from '../format';
import { makeTraceHeader } from '../ndjson';

interface Vector {
  name: string;
  salt: string;
  hex: string;
  expect: string;
}

const vectors: Vector[] = JSON.parse(
  readFileSync(new URL('../fixtures/wire-vectors.json', import.meta.url), 'utf8'),
);

export function vectorBytes(name: string): Uint8Array {
  const v = vectors.find((x) => x.name === name);
  if (!v) throw new Error(`no vector '${name}'`);
  return Uint8Array.from(Buffer.from(v.hex, 'hex'));
}

export const SALT_HEX = '0102030405060708090a0b0c0d0e0f10';
const SALT = Buffer.from(SALT_HEX, 'hex');

function tag(...parts: Uint8Array[]): Uint8Array {
  const h = createHmac('sha256', SALT);
  for (const p of parts) h.update(p);
  return Uint8Array.from(h.digest().subarray(0, 8));
}

const u32 = (n: number): Uint8Array => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n, true);
  return b;
};
const cat = (...parts: Uint8Array[]): Uint8Array => Uint8Array.from(Buffer.concat(parts));

/** A MuxRecord (WIRE.md 3.2) with its real tag. */
export function muxRecord(kind: number, rank: number, payload: Uint8Array): Uint8Array {
  const head = cat(u32(0xf10d17d0), u32(1), Uint8Array.of(kind), u32(rank), u32(payload.length));
  return cat(head, tag(head, payload), payload);
}

export function lenFrame(blob: Uint8Array): Uint8Array {
  return cat(u32(blob.length), blob);
}

/** A Model RoundFrame with one f32 tensor of `count` elements valued 0, 1, 2, ... */
export function bigRoundFrame(count: number, weight: number): Uint8Array {
  const data = new Float32Array(count).map((_, i) => i);
  const w = new Uint8Array(8);
  new DataView(w.buffer).setFloat64(0, weight, true);
  const nbytes = new Uint8Array(8);
  new DataView(nbytes.buffer).setBigUint64(0, BigInt(count * 4), true);
  const body = cat(
    u32(0xf10d17f1),
    u32(1),
    Uint8Array.of(0),
    w,
    Uint8Array.of(0, 1),
    u32(count),
    nbytes,
    new Uint8Array(data.buffer),
  );
  return cat(body, tag(body));
}

export const LINKS: TraceLink[] = [
  {
    id: 'h0.r0.data',
    channel: 'data',
    kind: 'loopback',
    from: 'r0',
    to: 'h0',
    host: 0,
    rank: 0,
    clientAddr: '127.0.0.1',
    clientPort: 47001,
    serverAddr: '127.0.0.1',
    serverPort: 1341,
  },
  {
    id: 'h0.r0.control',
    channel: 'control',
    kind: 'loopback',
    from: 'r0',
    to: 'h0',
    host: 0,
    rank: 0,
    clientAddr: '127.0.0.1',
    clientPort: 47002,
    serverAddr: '127.0.0.1',
    serverPort: 1342,
  },
  {
    id: 'h0.uplink.data',
    channel: 'data',
    kind: 'uplink',
    from: 'h0',
    to: 'controller',
    host: 0,
    clientAddr: '127.0.0.1',
    clientPort: 47003,
    serverAddr: '127.0.0.1',
    serverPort: 1337,
  },
  {
    id: 'h0.uplink.control',
    channel: 'control',
    kind: 'uplink',
    from: 'h0',
    to: 'controller',
    host: 0,
    clientAddr: '127.0.0.1',
    clientPort: 47004,
    serverAddr: '127.0.0.1',
    serverPort: 1337,
  },
];

export interface SampleUnit {
  link: string;
  dir: Direction;
  layer: UnitLayer;
  kind: string;
  bytes: Uint8Array;
  /** Keep only this many bytes (a unit captured short). */
  captured?: number;
}

/** The units of the sample session, in wire order. BIG_COUNT elements make the model-sized frame. */
export const BIG_COUNT = 50_000;

export function sampleUnits(): SampleUnit[] {
  const startEpoch = vectorBytes('controlframe v2 StartEpoch');
  const requestParams = vectorBytes('controlframe v2 RequestParams');
  return [
    {
      link: 'h0.r0.data',
      dir: 'up',
      layer: 'handshake',
      kind: 'dataHandshake',
      bytes: vectorBytes('handshake data v3'),
    },
    {
      link: 'h0.r0.data',
      dir: 'down',
      layer: 'handshake',
      kind: 'dataAck',
      bytes: vectorBytes('handshake data ack v3'),
    },
    {
      link: 'h0.r0.control',
      dir: 'up',
      layer: 'handshake',
      kind: 'controlHandshake',
      bytes: vectorBytes('handshake control v2'),
    },
    {
      link: 'h0.r0.control',
      dir: 'down',
      layer: 'handshake',
      kind: 'controlAck',
      bytes: vectorBytes('handshake control ack v2'),
    },
    {
      link: 'h0.uplink.data',
      dir: 'up',
      layer: 'channelMagic',
      kind: 'DATA magic',
      bytes: Uint8Array.of(0xe1, 0x17, 0x0d, 0xf1),
    },
    {
      link: 'h0.uplink.data',
      dir: 'up',
      layer: 'mux',
      kind: 'Hello',
      bytes: vectorBytes('mux control hello'),
    },
    {
      link: 'h0.uplink.data',
      dir: 'down',
      layer: 'mux',
      kind: 'HelloAck',
      bytes: vectorBytes('mux control helloack'),
    },
    {
      link: 'h0.uplink.control',
      dir: 'up',
      layer: 'channelMagic',
      kind: 'CONTROL magic',
      bytes: Uint8Array.of(0xe2, 0x17, 0x0d, 0xf1),
    },
    {
      link: 'h0.uplink.control',
      dir: 'up',
      layer: 'mux',
      kind: 'Hello',
      bytes: vectorBytes('mux control hello pascal'),
    },
    {
      link: 'h0.uplink.control',
      dir: 'down',
      layer: 'mux',
      kind: 'Data',
      bytes: muxRecord(1, 1, startEpoch),
    },
    {
      link: 'h0.r0.control',
      dir: 'down',
      layer: 'lenframe',
      kind: 'ControlFrame',
      bytes: lenFrame(startEpoch),
    },
    {
      link: 'h0.r0.control',
      dir: 'up',
      layer: 'lenframe',
      kind: 'ControlFrame',
      bytes: lenFrame(requestParams),
    },
    {
      link: 'h0.r0.data',
      dir: 'up',
      layer: 'lenframe',
      kind: 'RoundFrame',
      bytes: lenFrame(vectorBytes('roundframe f32 model weight 2')),
    },
    {
      link: 'h0.uplink.data',
      dir: 'up',
      layer: 'mux',
      kind: 'HostFrame',
      bytes: muxRecord(3, 0, vectorBytes('roundframe bf16')),
    },
    {
      link: 'h0.uplink.data',
      dir: 'down',
      layer: 'mux',
      kind: 'Broadcast',
      bytes: muxRecord(4, 0, vectorBytes('roundframe elided 57 bytes')),
    },
    {
      link: 'h0.r0.data',
      dir: 'down',
      layer: 'lenframe',
      kind: 'RoundFrame',
      bytes: lenFrame(vectorBytes('roundframe elided 57 bytes')),
    },
    // A model-sized HostFrame: several full 64 KiB segments to reassemble.
    {
      link: 'h0.uplink.data',
      dir: 'up',
      layer: 'mux',
      kind: 'HostFrame',
      bytes: muxRecord(3, 0, bigRoundFrame(BIG_COUNT, 3)),
    },
    // Captured short: the tap kept 40 of its bytes; the next unit must still line up.
    {
      link: 'h0.uplink.data',
      dir: 'down',
      layer: 'mux',
      kind: 'Broadcast',
      bytes: muxRecord(4, 0, bigRoundFrame(1000, 3)),
      captured: 40,
    },
    {
      link: 'h0.uplink.data',
      dir: 'up',
      layer: 'mux',
      kind: 'Control',
      bytes: vectorBytes('mux control rankexit'),
    },
    {
      link: 'h0.uplink.control',
      dir: 'up',
      layer: 'mux',
      kind: 'Data',
      bytes: vectorBytes('mux data rank 7'),
    },
    {
      link: 'h0.uplink.control',
      dir: 'down',
      layer: 'mux',
      kind: 'Control',
      bytes: vectorBytes('mux control declaredead'),
    },
    {
      link: 'h0.r0.control',
      dir: 'up',
      layer: 'lenframe',
      kind: 'blob',
      bytes: vectorBytes('lenframe 5 bytes'),
    },
    {
      link: 'h0.r0.control',
      dir: 'up',
      layer: 'lenframe',
      kind: 'blob',
      bytes: vectorBytes('lenframe empty'),
    },
  ];
}

export function unitRecord(u: SampleUnit, seq: number, t: number): RecordEvent {
  const captured = u.captured ?? u.bytes.length;
  const record: UnitRecord = {
    seq,
    t,
    link: u.link,
    dir: u.dir,
    layer: u.layer,
    kind: u.kind,
    length: u.bytes.length,
    captured,
    verdict: 'ok',
    summary: `${u.kind} ${u.bytes.length} B`,
  };
  return { type: 'record', t, record, bytes: u.bytes.subarray(0, captured) };
}

export const STARTED_AT = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

export function sampleHeader(links: TraceLink[] = LINKS): TraceHeader {
  return makeTraceHeader({
    startedAt: STARTED_AT,
    saltHex: SALT_HEX,
    config: { ...DEFAULT_TOPOLOGY, ranksPerHost: [1], saltHex: SALT_HEX },
    links,
    producer: 'relay-lab test',
    snapLen: 65536,
  });
}

/** The sample units as events, 1.5 ms apart, with a round, a finding and lifecycle events mixed in. */
export function sampleEvents(units: SampleUnit[] = sampleUnits()): TraceEvent[] {
  const events: TraceEvent[] = [{ type: 'lifecycle', t: 0, action: 'start', message: 'session started' }];
  units.forEach((u, i) => events.push(unitRecord(u, i + 1, 1 + i * 1.5)));
  const t = 1 + units.length * 1.5;
  events.push(
    {
      type: 'round',
      t,
      report: {
        round: 0,
        accepted: [0],
        verdict: 'ok',
        maxRelError: 0,
        durationMs: 12.5,
        uplinkBytesPerHost: [1234],
      },
    },
    {
      type: 'finding',
      t,
      finding: {
        id: 1,
        t,
        severity: 'warn',
        kind: 'fault',
        message: 'latency on h0.uplink.data',
        recordSeq: 3,
      },
    },
    {
      type: 'lifecycle',
      t: t + 1,
      action: 'faultApplied',
      link: 'h0.uplink.data',
      dir: 'up',
      fault: { kind: 'latency', ms: 20, jitterMs: 5 },
    },
    { type: 'lifecycle', t: t + 2, action: 'pauseRank', rank: 0 },
    { type: 'log', t: t + 3, level: 'info', message: 'ünïcode ok ✓' },
    { type: 'lifecycle', t: t + 4, action: 'linkClosed', link: 'h0.r0.data', by: 'client', reset: false },
    {
      type: 'lifecycle',
      t: t + 5,
      action: 'linkClosed',
      link: 'h0.uplink.control',
      by: 'server',
      reset: true,
    },
  );
  return events;
}
