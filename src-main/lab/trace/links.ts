// TraceLink endpoints: the engine supplies each socket's real addresses and
// ports; when it cannot (an older session, a test), deterministic stand-ins
// keep the export valid and are marked as such.
import type { LinkView } from '@shared/lab/state';
import type { TraceLink } from './format';

export interface Endpoints {
  clientAddr: string;
  clientPort: number;
  serverAddr: string;
  serverPort: number;
}

export function traceLink(
  view: Pick<LinkView, 'id' | 'from' | 'to' | 'channel' | 'kind' | 'host' | 'rank'>,
  ends: Endpoints,
): TraceLink {
  const link: TraceLink = {
    id: view.id,
    channel: view.channel,
    kind: view.kind,
    from: view.from,
    to: view.to,
    host: view.host,
    ...ends,
  };
  if (view.rank !== undefined) link.rank = view.rank;
  return link;
}

/**
 * Made-up endpoints on 127.0.0.1: uplinks go to the controller port, each
 * host's relay listens on port + 4 (data) and + 5 (control) shifted by
 * 10 per host (the lab runs every host on one machine), clients get
 * 40000 + their index. Marked syntheticEndpoints.
 */
export function syntheticTraceLinks(
  views: readonly LinkView[],
  controllerPort = 1337,
  firstIndex = 0,
): TraceLink[] {
  return views.map((v, j) => {
    const i = firstIndex + j;
    const serverPort =
      v.kind === 'uplink'
        ? controllerPort
        : controllerPort + (v.channel === 'data' ? 4 : 5) + 10 * Math.max(0, v.host);
    return {
      ...traceLink(v, {
        clientAddr: '127.0.0.1',
        clientPort: 40000 + i,
        serverAddr: '127.0.0.1',
        serverPort,
      }),
      syntheticEndpoints: true,
    };
  });
}

/** A link's shape from its id alone (`h0.uplink.data`, `h0.r3.control`, `r3.uplink.data`), when no view is at hand. */
export function linkViewFromId(id: string): LinkView | null {
  const m = /^(?:h(\d+)\.(?:(uplink)|r(\d+))|r(\d+)\.(uplink))\.(data|control)$/.exec(id);
  if (!m) return null;
  const channel = m[6] as 'data' | 'control';
  const base = { id, channel, bytesUp: 0, bytesDown: 0, units: 0 };
  if (m[1] !== undefined && m[2])
    return { ...base, from: `h${m[1]}`, to: 'controller', kind: 'uplink', host: Number(m[1]) };
  if (m[1] !== undefined)
    return {
      ...base,
      from: `r${m[3]}`,
      to: `h${m[1]}`,
      kind: 'loopback',
      host: Number(m[1]),
      rank: Number(m[3]),
    };
  return { ...base, from: `r${m[4]}`, to: 'controller', kind: 'uplink', host: -1, rank: Number(m[4]) };
}

/** What engineTraceLinks reads of a running Cluster (src-main/engine/cluster.ts). */
export interface ClusterPorts {
  /** The controller's one listening port (uplinks of every channel). */
  port: number;
  /** Per host, its relay's loopback listeners (null for a host without a relay). */
  relays: readonly ({ dataPort: number; controlPort: number } | null)[];
  tap: { linkViews(): LinkView[] };
}

/**
 * The links of a running cluster with the real listening ports the engine
 * still exposes: the controller's, and a relay's loopback ports while its
 * listeners are open (it closes them once its ranks are in, so after start
 * these fall back to stand-ins). The dialing side's ephemeral port is not
 * exposed by the engine yet, so client ports are stand-ins (40000 + index)
 * and the links stay marked syntheticEndpoints.
 */
export function engineTraceLinks(cluster: ClusterPorts): TraceLink[] {
  const stand = syntheticTraceLinks(cluster.tap.linkViews(), cluster.port);
  return stand.map((link) => {
    const relay = link.host >= 0 ? cluster.relays[link.host] : null;
    if (link.kind === 'uplink' || !relay) return link;
    try {
      return { ...link, serverPort: link.channel === 'data' ? relay.dataPort : relay.controlPort };
    } catch {
      // A relay closes its loopback listeners once every local rank has connected.
      return link;
    }
  });
}
