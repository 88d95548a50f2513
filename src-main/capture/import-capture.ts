// A capture file to decoded flodl units: reassembled TCP connections fed to
// the stream decoder (both directions in capture-time order), connections
// that carry no flodl unit left out, the rest named like the lab's links
// (a loopback rank's host comes from the Hellos in the same capture), and
// written as a trace with every gap named.
import { captureRounds } from './capture-rounds';
import type { Writable } from 'node:stream';
import type { UplinkMode } from '@shared/lab/topology';
import type { ControlIndexTable } from '@shared/wire/control-msg-tables';
import type { Mac } from '@shared/wire/mac';
import type { TraceLink } from '../lab/trace/format';
import { TraceWriter } from '../lab/trace/ndjson';
import { readCapture } from './capture-file';
import { linkIdOf, traceLinkOf, hostIndexOfName } from './link-naming';
import { StreamDecoder, type DecodedUnit } from './stream-decoder';
import { reassemble, swapConnection, type StreamPiece, type TcpConnection } from './tcp-reassembly';
import { captureTraceHeader, CaptureTraceWriter } from './trace-out';

export interface ImportOptions {
  mac: Mac;
  ceiling?: number;
  controlVersion?: number;
  indexTable?: ControlIndexTable;
  snapLen?: number;
}

export interface ImportedStream {
  link: TraceLink;
  conn: TcpConnection;
  units: DecodedUnit[];
  undecodable: number;
  gapBytes: number;
}

export interface ImportResult {
  format: 'pcap' | 'pcapng';
  packets: number;
  tcpConnections: number;
  /** Epoch ms of the first packet: the trace's startedAt. */
  startedAt: number;
  streams: ImportedStream[];
  ranksPerHost: number[];
  mode: UplinkMode;
}

export function importCapture(file: Uint8Array, o: ImportOptions): ImportResult {
  const cap = readCapture(file);
  const conns = reassemble(cap.segments);
  const startedAt = conns.reduce((a, c) => Math.min(a, c.firstTime), conns.length ? Infinity : 0);
  const decoded: { conn: TcpConnection; d: StreamDecoder; units: DecodedUnit[] }[] = [];
  for (let conn of conns) {
    let { d, units } = decodeConnection(conn, o, startedAt);
    // Without a SYN the client was guessed: the bytes tell which side sends the up-only units.
    if (!conn.clientFromSyn && reversedScore(units) > 0) {
      conn = swapConnection(conn);
      ({ d, units } = decodeConnection(conn, o, startedAt));
    }
    // Keep a connection that carried at least one framed flodl unit (accepted or not: a wrong salt shows).
    if (units.some((u) => u.verdict === 'ok' || (u.verdict === 'undecodable' && !NOT_A_UNIT.has(u.kind))))
      decoded.push({ conn, d, units });
  }
  // Hosts from the Hellos: name them in loopback link ids, count their ranks for the header.
  const hostOfRankMap = new Map<number, number>();
  const hosts = new Map<number, number[]>();
  for (const { d } of decoded) {
    if (!d.hello) continue;
    const h = hostIndexOfName(d.hello.host);
    if (h < 0) continue;
    hosts.set(h, d.hello.ranks);
    for (const r of d.hello.ranks) hostOfRankMap.set(r, h);
  }
  const hostOfRank = (r: number) => hostOfRankMap.get(r) ?? -1;
  const streams: ImportedStream[] = decoded.map(({ conn, d, units }, i) => {
    const id = linkIdOf(d, undefined, hostOfRank) ?? `tcp${i}.${d.channel ?? 'unknown'}`;
    const link = traceLinkOf(
      id,
      d,
      {
        clientAddr: conn.client.addr,
        clientPort: conn.client.port,
        serverAddr: conn.server.addr,
        serverPort: conn.server.port,
      },
      hostOfRank,
    );
    return { link, conn, units, undecodable: d.stats.undecodable, gapBytes: d.stats.gapBytes };
  });
  const hostCount = hosts.size ? Math.max(...hosts.keys()) + 1 : 0;
  const direct = decoded.some(({ d }) => d.role === 'direct');
  return {
    format: cap.format,
    packets: cap.packets,
    tcpConnections: conns.length,
    startedAt,
    streams,
    ranksPerHost: ranksPerHostOf(hosts, hostCount),
    mode: direct ? 'direct' : 'fold',
  };
}

/**
 * The topology's ranks per host from the Hellos seen. The lab numbers ranks
 * host by host, so a host missing from the capture is given the ranks that
 * keep the next seen host's numbering right (all on the last missing host).
 */
function ranksPerHostOf(hosts: Map<number, number[]>, hostCount: number): number[] {
  const out = new Array<number>(hostCount).fill(0);
  let next = 0;
  let lastMissing = -1;
  for (let h = 0; h < hostCount; h++) {
    const ranks = hosts.get(h);
    if (!ranks) {
      lastMissing = h;
      continue;
    }
    const first = ranks.length ? Math.min(...ranks) : next;
    if (first > next && lastMissing >= 0) out[lastMissing] += first - next;
    out[h] = ranks.length;
    next = Math.max(next, first) + ranks.length;
  }
  return out;
}

/** Kinds that name bytes, not a framed unit. */
const NOT_A_UNIT = new Set(['skipped', 'gap', 'partial']);

function decodeConnection(conn: TcpConnection, o: ImportOptions, startedAt: number) {
  const units: DecodedUnit[] = [];
  const d = new StreamDecoder({
    mac: o.mac,
    ceiling: o.ceiling,
    controlVersion: o.controlVersion,
    indexTable: o.indexTable,
    snapLen: o.snapLen,
    midStream: conn.midStream,
    onUnit: (u) => units.push(u),
  });
  for (const [dir, p] of mergeByTime(conn.up, conn.down)) {
    const t = p.time - startedAt;
    if ('gap' in p) d.gap(dir, p.gap, t);
    else d.push(dir, p.data, t);
  }
  let last = conn.firstTime;
  for (const p of conn.up) last = Math.max(last, p.time);
  for (const p of conn.down) last = Math.max(last, p.time);
  const tEnd = (conn.closed?.time ?? last) - startedAt;
  d.end('up', tEnd);
  d.end('down', tEnd);
  return { d, units };
}

/** Units that only travel up (toward the controller) seen going down, minus the reverse. */
const UP_ONLY = new Set([
  'DATA magic',
  'CONTROL magic',
  'Hello',
  'HostFrame',
  'RankExit',
  'dataHandshake',
  'controlHandshake',
]);
const DOWN_ONLY = new Set([
  'HelloAck',
  'Broadcast',
  'DeclareDead',
  'dataHandshakeAck',
  'controlHandshakeAck',
]);
function reversedScore(units: DecodedUnit[]): number {
  let score = 0;
  for (const u of units) {
    if (u.verdict !== 'ok') continue;
    if (UP_ONLY.has(u.kind)) score += u.dir === 'up' ? -1 : 1;
    else if (DOWN_ONLY.has(u.kind)) score += u.dir === 'down' ? -1 : 1;
  }
  return score;
}

function mergeByTime(up: StreamPiece[], down: StreamPiece[]): ['up' | 'down', StreamPiece][] {
  const out: ['up' | 'down', StreamPiece][] = [];
  let i = 0;
  let j = 0;
  while (i < up.length || j < down.length) {
    if (j >= down.length || (i < up.length && up[i].time <= down[j].time)) out.push(['up', up[i++]]);
    else out.push(['down', down[j++]]);
  }
  return out;
}

/** Writes the imported streams as a trace, all units in time order. */
export async function writeImportTrace(
  r: ImportResult,
  salt: Uint8Array,
  out: string | Writable,
  snapLen: number,
  /** The control message index table the capture was decoded with: the trace's readers use it too. */
  indexTable?: ControlIndexTable,
): Promise<number> {
  const all = r.streams.flatMap((s) => s.units.map((u) => ({ s, u })));
  all.sort((a, b) => a.u.t - b.u.t);
  // The model and the rounds as the capture shows them (not the lab's defaults).
  const rounds = captureRounds(all.map(({ s, u }) => ({ link: s.link, u })));
  const header = captureTraceHeader({
    salt,
    startedAt: r.startedAt,
    producer: 'relay-lab import',
    snapLen,
    config: {
      ranksPerHost: r.ranksPerHost,
      mode: r.mode,
      ...(rounds.modelBytes ? { modelBytes: rounds.modelBytes } : {}),
      ...(rounds.dtype ? { dtype: rounds.dtype } : {}),
      ...(indexTable ? { controlIndexTable: indexTable } : {}),
    },
    // Every link known up front (a reconnect with the same id comes as a link event).
    links: [...new Map(r.streams.map((s) => [s.link.id, s.link] as const)).values()],
  });
  const writer = new CaptureTraceWriter(
    typeof out === 'string' ? TraceWriter.toFile(out, header) : new TraceWriter(out, header),
  );
  const closes = r.streams.filter((s) => s.conn.closed);
  let k = 0;
  const closeOrder = closes.sort((a, b) => a.conn.closed!.time - b.conn.closed!.time);
  let report = 0;
  for (const [i, { s, u }] of all.entries()) {
    while (k < closeOrder.length && closeOrder[k].conn.closed!.time - r.startedAt < u.t) {
      const c = closeOrder[k++];
      writer.closed(c.link, c.conn.closed!.by, c.conn.closed!.reset, c.conn.closed!.time - r.startedAt);
    }
    writer.unit(s.link, u, rounds.roundOf[i]);
    for (; rounds.reports[report]?.after === i; report++) writer.round(rounds.reports[report]!.report, u.t);
  }
  for (; k < closeOrder.length; k++) {
    const c = closeOrder[k];
    writer.closed(c.link, c.conn.closed!.by, c.conn.closed!.reset, c.conn.closed!.time - r.startedAt);
  }
  await writer.close();
  return all.length;
}
