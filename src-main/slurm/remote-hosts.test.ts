// A host whose relay and ranks are driven through a host agent (a Slurm
// task's), over real sockets with real rank processes: the rounds verify bit
// for bit, a kill behind the agent is seen, a host lost mid-run is named, and
// an agent without the salt is refused.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_TOPOLOGY, type TopologyConfig } from '@shared/lab/topology';
import { parseSessionSalt } from '@shared/lab/session-salt';
import { runTopology } from '../lab/run-topology';
import { runHostAgent } from './host-agent';
import { RemoteHosts } from './remote-hosts';
import { line } from './agent-protocol';

const SALT = '0102030405060708090a0b0c0d0e0f10';
const salt = parseSessionSalt(SALT).bytes;
const base: TopologyConfig = {
  ...DEFAULT_TOPOLOGY,
  ranksPerHost: [2, 2],
  modelBytes: 8192,
  rounds: 3,
  roundIntervalMs: 0,
  stalenessMs: 3000,
  saltHex: SALT,
};

const open: RemoteHosts[] = [];
afterEach(async () => {
  for (const r of open.splice(0)) await r.close();
});

async function remoteHosts(hosts: number[]): Promise<{ remote: RemoteHosts; agents: Promise<number>[] }> {
  const { remote } = await listeningFor(hosts);
  const agents = hosts.map((host) =>
    runHostAgent({ host, salt, engine: remote.rendezvous(), log: () => {} }),
  );
  await remote.waitAll(10_000);
  return { remote, agents };
}

/** The engine's side alone, listening for `hosts` on loopback, with what it logs. */
async function listeningFor(hosts: number[]): Promise<{ remote: RemoteHosts; logs: string[] }> {
  const logs: string[] = [];
  const remote = await RemoteHosts.listen({
    salt,
    hosts,
    advertiseAddress: '127.0.0.1',
    listenAddress: '127.0.0.1',
    onLog: (_l, m) => logs.push(m),
  });
  open.push(remote);
  return { remote, logs };
}

describe('hosts on other nodes, through their agents', () => {
  it('fold and direct with host 1 remote: every round ok, bit for bit', async () => {
    for (const mode of ['fold', 'direct'] as const) {
      const { remote, agents } = await remoteHosts([1]);
      const report = await runTopology({ ...base, mode }, { extra: { remote } });
      expect(report.verdict, `${mode}: ${report.ended}`).toBe('ok');
      expect(report.roundsCompleted).toBe(3);
      expect(report.rounds.every((r) => r.verdict === 'ok')).toBe(true);
      expect(report.rounds.map((r) => r.accepted)).toEqual([
        [0, 1, 2, 3],
        [0, 1, 2, 3],
        [0, 1, 2, 3],
      ]);
      await remote.close();
      expect(await agents[0]).toBe(0);
    }
  });

  it('a rank killed behind an agent is declared dead and the rest go on', async () => {
    const { remote } = await remoteHosts([1]);
    const report = await runTopology(
      { ...base, rounds: 4 },
      { extra: { remote }, faults: [{ action: 'kill-rank', target: 3, round: 1 }] },
    );
    expect(report.dead).toEqual([3]);
    expect(report.roundsCompleted).toBe(4);
    expect(report.rounds.every((r) => r.verdict === 'ok')).toBe(true);
    expect(report.rounds[3].accepted).toEqual([0, 1, 2]);
  });

  it('an agent that does not hold the salt is refused by name', async () => {
    const { remote, logs } = await listeningFor([1]);
    const wrong = parseSessionSalt('ff'.repeat(16)).bytes;
    const status = await runHostAgent({ host: 1, salt: wrong, engine: remote.rendezvous(), log: () => {} });
    expect(status).toBe(1);
    expect(logs.join('\n')).toMatch(/does not hold the session salt/);
    await expect(remote.waitAll(300)).rejects.toThrow(/AGENTS_MISSING: host agent\(s\) h1/);
  });

  it('a hostile peer (a line with no end) is dropped, not buffered', async () => {
    const { remote, logs } = await listeningFor([1]);
    const { port } = remote.rendezvous();
    const s = net.connect(port, '127.0.0.1');
    const closed = new Promise((r) => s.on('close', r));
    s.on('error', () => {});
    s.write(line({ type: 'log', level: 'info', message: 'before hello' }));
    await closed;
    const s2 = net.connect(port, '127.0.0.1');
    const closed2 = new Promise((r) => s2.on('close', r));
    s2.on('error', () => {});
    s2.write(Buffer.alloc(2 << 20, 0x61));
    await closed2;
    expect(logs.join('\n')).toMatch(/no hello/);
    expect(logs.join('\n')).toMatch(/LINE_TOO_LONG/);
  });
});
