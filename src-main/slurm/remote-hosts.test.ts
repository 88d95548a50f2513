// A host whose relay and ranks are driven through a host agent (a Slurm
// task's), over real sockets with real rank processes: the rounds verify bit
// for bit, a kill behind the agent is seen, a host lost mid-run is named, and
// an agent without the salt is refused. The remote host's loopback legs reach
// the job's tap as a local host's do, and a link that falls behind costs
// named gaps, never the run.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_TOPOLOGY, type TopologyConfig } from '@shared/lab/topology';
import { parseSessionSalt } from '@shared/lab/session-salt';
import type { UnitRecord } from '@shared/lab/records';
import { dissect } from '@shared/wire/dissect';
import type { Tap } from '../engine/tap';
import { runTopology, type RunReport } from '../lab/run-topology';
import type { TopologySession } from '../lab/topology-session';
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

/** What the engine asks of the agents' loopback legs (RemoteHostsOptions). */
type LegChoice = { legs?: boolean; legQueueBytes?: number };

async function remoteHosts(
  hosts: number[],
  legs: LegChoice = {},
): Promise<{ remote: RemoteHosts; agents: Promise<number>[]; logs: string[] }> {
  const { remote, logs } = await listeningFor(hosts, legs);
  const agents = hosts.map((host) =>
    runHostAgent({ host, salt, engine: remote.rendezvous(), log: () => {} }),
  );
  await remote.waitAll(10_000);
  return { remote, agents, logs };
}

/** The engine's side alone, listening for `hosts` on loopback, with what it logs. */
async function listeningFor(
  hosts: number[],
  legs: LegChoice = {},
): Promise<{ remote: RemoteHosts; logs: string[] }> {
  const logs: string[] = [];
  const remote = await RemoteHosts.listen({
    salt,
    hosts,
    advertiseAddress: '127.0.0.1',
    listenAddress: '127.0.0.1',
    onLog: (_l, m) => logs.push(m),
    ...legs,
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

/** A run with host 1 remote and the job's tap kept, every unit recorded until the agent has ended. */
async function legsRun(
  config: Partial<TopologyConfig>,
  legs: LegChoice = {},
  atStart?: (s: TopologySession) => void,
): Promise<{ report: RunReport; tap: Tap; records: UnitRecord[]; logs: string[]; remote: RemoteHosts }> {
  const { remote, agents, logs } = await remoteHosts([1], legs);
  let tap: Tap | null = null;
  const records: UnitRecord[] = [];
  const report = await runTopology(
    { ...base, ...config },
    {
      extra: { remote },
      snapLen: 64 * 1024,
      onRoundsStart: (s) => {
        tap = s.activeCluster!.tap;
        // The units before the rounds (handshakes) are still held; then every one as it comes.
        records.push(...tap.heldRecords);
        tap.onRecord((r) => records.push(r));
        atStart?.(s);
      },
    },
  );
  // The agent sends what its relay's tap still holds (gaps, counters) as it ends.
  await remote.close();
  expect(await agents[0]).toBe(0);
  return { report, tap: tap!, records, logs, remote };
}

const on = (records: UnitRecord[], link: string) => records.filter((r) => r.link === link);
/** What crossed a leg, unit by unit: the same protocol on every host gives the same list. */
const shape = (records: UnitRecord[]) =>
  records.map((r) => `${r.dir} ${r.kind} ${r.length} ${r.round ?? ''}`);

describe("a remote host's loopback legs, through its agent", () => {
  it("arrive in the job tap named as a local host's, with verdict ok, MACs that verify and the savings figures", async () => {
    let faultRefused = '';
    const { report, tap, records, logs, remote } = await legsRun({ rounds: 3 }, {}, (s) => {
      try {
        s.activeCluster!.setLinkFault('h1.r2.data', { dir: 'both', latencyMs: 5 });
      } catch (e) {
        faultRefused = (e as Error).message;
      }
    });
    expect(report.verdict, report.ended).toBe('ok');
    // Seen, not held: the engine has no end of a remote leg to put a fault on, and says so.
    expect(faultRefused).toMatch(/'h1\.r2\.data' is a loopback leg on host h1's own node/);
    const views = tap.linkViews();
    for (const rank of [2, 3])
      for (const channel of ['data', 'control'] as const) {
        const id = `h1.r${rank}.${channel}`;
        const local = views.find((v) => v.id === `h0.r${rank - 2}.${channel}`)!;
        const remoteLeg = views.find((v) => v.id === id);
        // The same shape as h0's leg: rank -> relay on the host, its counters from the agent's node.
        expect(remoteLeg, id).toMatchObject({
          from: `rank ${rank}`,
          to: 'relay h1',
          channel,
          kind: 'loopback',
          host: 1,
          rank,
        });
        expect(Object.keys(remoteLeg!).sort()).toEqual(Object.keys(local).sort());
        expect(remoteLeg!.bytesUp).toBeGreaterThan(0);
        expect(remoteLeg!.bytesDown).toBeGreaterThan(0);
        expect(remoteLeg!.units).toBe(on(records, id).length);
      }
    // A data leg carries the same units on either host: handshake, then each round's frame up and consensus down.
    expect(shape(on(records, 'h1.r2.data'))).toEqual(shape(on(records, 'h0.r0.data')));
    expect(on(records, 'h1.r2.data').filter((r) => r.kind === 'RoundFrame')).toHaveLength(6);
    const legs = records.filter((r) => r.host === 1 && r.link.startsWith('h1.r'));
    expect(legs.every((r) => r.verdict === 'ok')).toBe(true);
    // Whole units as the engine holds them: the dissector checks every frame's MAC again, with the salt.
    let macs = 0;
    for (const r of legs) {
      const held = tap.bytesOf(r.seq)!;
      expect(held.bytes.length).toBe(r.length);
      if (r.layer === 'channelMagic') continue;
      const d = dissect(r.layer, held.bytes, { salt });
      expect(d.verdict, `${r.link} ${r.summary}`).toBe('ok');
      if (d.inner) {
        expect(d.inner.verdict, `${r.link} ${r.summary}`).toBe('ok');
        macs++;
      }
    }
    // Every round's frame up and consensus down on both ranks' data legs, and the control frames.
    expect(macs).toBeGreaterThanOrEqual(12);
    // ...and a check that can fail: one byte flipped in a remote rank's frame is an HMAC mismatch.
    const frame = legs.find((r) => r.kind === 'RoundFrame' && r.dir === 'up')!;
    const flipped = tap.bytesOf(frame.seq)!.bytes.slice();
    flipped[flipped.length >> 1] ^= 0x01;
    expect(dissect('lenframe', flipped, { salt }).inner?.verdict).toBe('HMAC_MISMATCH');
    // The savings: each remote rank's own frame bytes are known as a local rank's are.
    for (const round of report.rounds) {
      expect(round.rankDataUpBytes![1]).toEqual(round.rankDataUpBytes![0]);
      expect(round.rankDataUpBytes![1].every((b) => b > 0)).toBe(true);
    }
    expect(remote.agent(1)!.legs).toMatchObject({ notKept: 0, unreadable: 0 });
    expect(logs.join('\n')).not.toMatch(/not kept|dropped/);
  });

  it('past the bound on the agent link: named gaps counted unit for unit, not a failure', async () => {
    // A bound of one byte: any unit recorded while another is still unacknowledged is past it
    // (the relay writes each consensus to both ranks in one go, so every round has one).
    const { report, tap, records, logs, remote } = await legsRun(
      { rounds: 4, modelBytes: 64 * 1024 },
      { legQueueBytes: 1 },
    );
    expect(report.verdict, report.ended).toBe('ok');
    expect(report.rounds.every((r) => r.verdict === 'ok')).toBe(true);
    expect(report.findings.filter((f) => f.kind === 'hmac' || f.kind === 'rejected')).toEqual([]);
    const gaps = records.filter((r) => r.kind === 'gap');
    expect(gaps.length).toBeGreaterThan(0);
    for (const g of gaps) {
      expect(g.link).toMatch(/^h1\.r[23]\.(data|control)$/);
      expect(g.verdict).toBe('ok');
      expect(g.captured).toBe(0);
      expect(g.summary).toMatch(/^gap: \d+ units? \(\d+ B\) not kept: the agent link fell behind$/);
    }
    const unitsIn = (gs: UnitRecord[]) =>
      gs.reduce((n, g) => n + Number(/(\d+) unit/.exec(g.summary)![1]), 0);
    const totals = remote.agent(1)!.legs!;
    expect(totals.notKept).toBe(unitsIn(gaps));
    expect(totals.notKeptBytes).toBe(gaps.reduce((n, g) => n + g.length, 0));
    expect(totals.unreadable).toBe(0);
    // Counted, not lost: on each data leg, units kept plus units in its gaps are what h0's leg carried.
    for (const rank of [2, 3]) {
      const leg = on(records, `h1.r${rank}.data`);
      const kept = leg.filter((r) => r.kind !== 'gap');
      expect(kept.length + unitsIn(leg.filter((r) => r.kind === 'gap'))).toBe(
        on(records, `h0.r${rank - 2}.data`).length,
      );
      // What was kept whole verifies (a 64 KiB model's frames are longer than the snap length).
      for (const r of kept)
        if (r.layer !== 'channelMagic' && r.captured === r.length) {
          const d = dissect(r.layer, tap.bytesOf(r.seq)!.bytes, { salt });
          expect(d.inner?.verdict ?? d.verdict).toBe('ok');
        }
    }
    // Named in the log as what it is: never a wire failure, never a lost host.
    expect(logs.join('\n')).toMatch(
      /h1\.r[23]\.(data|control) (up|down): \d+ units? \(\d+ B\) not kept: the agent link fell behind/,
    );
    expect(logs.join('\n')).not.toMatch(/went away|HMAC|rejected/);
  });

  it("switched off: none of the host's legs reach the job's tap, the run still verifies", async () => {
    const { report, records, remote } = await legsRun({ rounds: 2 }, { legs: false });
    expect(report.verdict, report.ended).toBe('ok');
    expect(records.filter((r) => r.link.startsWith('h1.r'))).toEqual([]);
    expect(records.filter((r) => r.link.startsWith('h0.r')).length).toBeGreaterThan(0);
    expect(remote.agent(1)!.legs).toBeNull();
  });
});
