// Link ids and trace units for connections seen from outside the lab (a live
// tap, a capture): the ids follow the engine's LinkView naming
// (`h0.uplink.data`, `h0.r3.control`, `r3.uplink.data`) so a tapped or
// imported trace reads like the lab's own, and each decoded unit becomes the
// UnitRecord the trace format stores.
import type { UnitRecord } from '@shared/lab/records';
import type { TraceLink } from '../lab/trace/format';
import type { DecodedUnit, StreamDecoder } from './stream-decoder';

export interface ConnEndpoints {
  clientAddr: string;
  clientPort: number;
  serverAddr: string;
  serverPort: number;
}

/** Host index of a host name like "h3" (the lab's naming); -1 for any other name. */
export function hostIndexOfName(name: string): number {
  const m = /^h(\d+)(?:\.|$)/.exec(name);
  return m ? Number(m[1]) : -1;
}

/**
 * The link id of a decoded connection, or null while it is not known yet.
 * `name` (the tap's --name, e.g. "h0.uplink") wins; otherwise the Hello's host
 * or the handshake's rank names it; `hostOfRank` maps a loopback rank to its host.
 */
export function linkIdOf(
  d: StreamDecoder,
  name: string | undefined,
  hostOfRank?: (rank: number) => number,
): string | null {
  if (!d.channel) return null;
  if (name) return `${name}.${d.channel}`;
  if (d.hello) return `${d.hello.host}.uplink.${d.channel}`;
  if (d.handshakeRank !== null) {
    if (d.role === 'direct') return `r${d.handshakeRank}.uplink.${d.channel}`;
    const host = hostOfRank?.(d.handshakeRank) ?? -1;
    return host >= 0 ? `h${host}.r${d.handshakeRank}.${d.channel}` : `r${d.handshakeRank}.${d.channel}`;
  }
  return null;
}

export function traceLinkOf(
  id: string,
  d: StreamDecoder,
  ends: ConnEndpoints,
  hostOfRank?: (rank: number) => number,
): TraceLink {
  const loopback = d.role === 'loopback';
  const rank = d.handshakeRank ?? undefined;
  let host = hostIndexOfName(id);
  if (host < 0 && d.hello) host = hostIndexOfName(d.hello.host);
  if (host < 0 && rank !== undefined) host = hostOfRank?.(rank) ?? -1;
  const hostLabel = d.hello?.host ?? (host >= 0 ? `h${host}` : 'relay');
  return {
    id,
    channel: d.channel ?? 'data',
    kind: loopback ? 'loopback' : 'uplink',
    from: loopback || d.role === 'direct' ? `rank ${rank ?? '?'}` : hostLabel,
    to: loopback ? hostLabel : 'controller',
    host,
    ...(rank !== undefined && d.role !== 'uplink' ? { rank } : {}),
    clientAddr: ends.clientAddr,
    clientPort: ends.clientPort,
    serverAddr: ends.serverAddr,
    serverPort: ends.serverPort,
  };
}

/** The trace record of a decoded unit (`verdict` = 'ok' or the codec's code). */
export function unitRecordOf(seq: number, link: TraceLink, u: DecodedUnit): UnitRecord {
  const rec: UnitRecord = {
    seq,
    t: u.t,
    link: link.id,
    dir: u.dir,
    layer: u.layer,
    kind: u.kind,
    length: u.length,
    captured: u.bytes.length,
    verdict: u.verdict === 'ok' ? 'ok' : (u.code ?? 'BAD_PAYLOAD'),
    summary: u.verdict === 'ok' ? u.summary : `${u.summary}: ${u.message ?? u.code ?? ''}`,
  };
  if (link.host >= 0) rec.host = link.host;
  // As the engine's tap: a rank link's units carry the link's rank; its handshake names it in the bytes.
  const rank = u.layer === 'handshake' ? undefined : (u.rank ?? link.rank);
  if (rank !== undefined) rec.rank = rank;
  return rec;
}

/** The tap's --ndjson line of a unit. */
export function unitLineOf(link: string, u: DecodedUnit): Record<string, unknown> {
  const line: Record<string, unknown> = {
    t: Math.round(u.t * 1000) / 1000,
    link,
    dir: u.dir,
    layer: u.layer,
    kind: u.kind,
  };
  if (u.rank !== undefined) line.rank = u.rank;
  line.length = u.length;
  line.verdict = u.verdict;
  if (u.verdict !== 'ok') {
    line.code = u.code;
    line.message = u.message;
  }
  line.summary = u.summary;
  return line;
}
