// Synthetic records and snapshots for the renderer's store tests.
import type { UnitRecord } from '@shared/lab/records';
import type { SessionSnapshot, LinkView } from '@shared/lab/state';
import { DEFAULT_TOPOLOGY, ranksOfHosts, hostName } from '@shared/lab/topology';

export function record(seq: number, patch: Partial<UnitRecord> = {}): UnitRecord {
  return {
    seq,
    t: seq * 10,
    link: 'h0.uplink.data',
    dir: 'up',
    layer: 'mux',
    kind: 'HostFrame',
    host: 0,
    round: 0,
    length: 100,
    captured: 100,
    verdict: 'ok',
    summary: `unit ${seq}`,
    ...patch,
  };
}

export function links(bytesUp: (id: string) => number): LinkView[] {
  const out: LinkView[] = [];
  ranksOfHosts([4, 4]).forEach((ranks, host) => {
    out.push({
      id: `h${host}.uplink.data`,
      from: `h${host}`,
      to: 'controller',
      channel: 'data',
      kind: 'uplink',
      host,
      bytesUp: bytesUp(`h${host}.uplink.data`),
      bytesDown: 0,
      units: 0,
    });
    for (const rank of ranks) {
      const id = `h${host}.r${rank}.data`;
      out.push({
        id,
        from: `r${rank}`,
        to: `h${host}`,
        channel: 'data',
        kind: 'loopback',
        host,
        rank,
        bytesUp: bytesUp(id),
        bytesDown: 0,
        units: 0,
      });
    }
  });
  return out;
}

export function snapshot(patch: Partial<SessionSnapshot> = {}): SessionSnapshot {
  const groups = ranksOfHosts([4, 4]);
  return {
    running: true,
    config: { ...DEFAULT_TOPOLOGY, saltHex: '00'.repeat(16) },
    saltHex: '00'.repeat(16),
    hosts: groups.map((ranks, host) => ({ host, name: hostName(host), ranks, state: 'up' })),
    ranks: groups.flatMap((ranks, host) =>
      ranks.map((rank) => ({ rank, host, state: 'alive' as const, roundsCompleted: 0 })),
    ),
    links: links(() => 0),
    round: 0,
    roundsCompleted: 0,
    roundsPaused: false,
    startedAt: 1000,
    ...patch,
  };
}
