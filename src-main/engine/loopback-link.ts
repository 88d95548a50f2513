// The name and ends of a rank's loopback leg to its relay, one definition for
// every place that records one: a local relay's channel, the tap on a leg, and
// a remote host's legs recorded by the engine for its agent.
import type { ChannelName } from './relay-options';
import type { TapLinkInfo } from './tap';

/** A rank's loopback leg to its relay as the tap names it (h1.r2.data); a remote host's legs are named the same. */
export function loopbackLinkInfo(
  host: number,
  hostName: string,
  rank: number,
  channel: ChannelName,
): TapLinkInfo {
  return {
    id: `${hostName}.r${rank}.${channel}`,
    from: `rank ${rank}`,
    to: `relay ${hostName}`,
    channel,
    kind: 'loopback',
    host,
    rank,
  };
}
