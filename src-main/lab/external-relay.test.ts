// External relays (a host's relay run as a command under flodl's launch
// contract) end to end: Relay Lab's own relay through `relay --from-env` on
// one host and on every host, and the misbehaving relays of
// fixtures/external-relays, each named in a finding (or the start-up error)
// with its host and command while the lab stays up.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TOPOLOGY, type TopologyConfig } from '@shared/lab/topology';
import { runTopology } from './run-topology';
import { TopologySession } from './topology-session';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fixture = (name: string) => `node ${path.join(root, 'fixtures', 'external-relays', name)}`;
const LAB_RELAY = `node ${path.join(root, 'bin', 'relay-lab.mjs')} relay --from-env`;

const config = (relayCommands: (string | null)[], over: Partial<TopologyConfig> = {}): TopologyConfig => ({
  ...DEFAULT_TOPOLOGY,
  ranksPerHost: [2, 2],
  modelBytes: 16 * 1024,
  rounds: 3,
  roundIntervalMs: 0,
  relayCommands,
  ...over,
});

describe('external relays (Relay Lab relay --from-env)', () => {
  it('one host external: every round bit-exact, its legs and uplinks decoded, its exit in the report', async () => {
    const lines: string[] = [];
    const report = await runTopology(config([LAB_RELAY, null], { dtype: 'bf16' }), {
      onExternalRelayLine: (h, _s, line) => lines.push(`h${h}: ${line}`),
    });
    expect(report.verdict).toBe('ok');
    expect(report.rounds.map((r) => r.verdict)).toEqual(['ok', 'ok', 'ok']);
    const ids = report.links.map((l) => l.id);
    for (const id of ['h0.r0.data', 'h0.r1.control', 'h0.uplink.data', 'h0.uplink.control'])
      expect(ids).toContain(id);
    expect(report.links.find((l) => l.id === 'h0.r0.data')!.units).toBeGreaterThanOrEqual(5);
    expect(report.externalRelays).toEqual([
      { host: 0, command: LAB_RELAY, exit: 'exit code 0', stopped: 'exited' },
    ]);
    expect(lines.some((l) => /^h0: relay h0 listening/.test(l))).toBe(true);
  });

  it('every host external, 3 hosts x 3 ranks, a rank killed behind its relay: verdict ok', async () => {
    const report = await runTopology(
      config([LAB_RELAY, LAB_RELAY, LAB_RELAY], { ranksPerHost: [3, 3, 3], rounds: 4 }),
      {
        faults: [{ action: 'kill-rank', target: 4, round: 1 }],
      },
    );
    expect(report.verdict).toBe('ok');
    expect(report.dead).toEqual([4]);
    expect(report.rounds.every((r) => r.verdict === 'ok')).toBe(true);
    expect(report.externalRelays?.map((x) => x.exit)).toEqual(['exit code 0', 'exit code 0', 'exit code 0']);
  });

  it('link faults on its loopback legs and its uplink apply, and every round stays bit-exact', async () => {
    const report = await runTopology(config([LAB_RELAY, null], { rounds: 3 }), {
      faults: [
        {
          action: 'link-fault',
          target: -1,
          round: 0,
          link: 'h0.r0.data',
          fault: { dir: 'up', sliceBytes: 64, sliceGapMs: 1 },
        },
        {
          action: 'link-fault',
          target: -1,
          round: 1,
          link: 'h0.uplink.data',
          fault: { dir: 'both', sliceBytes: 7, sliceGapMs: 1 },
        },
        { action: 'link-fault', target: -1, round: 2, link: 'h0.r0.data', fault: null },
      ],
    });
    expect(report.verdict).toBe('ok');
    expect(report.rounds.map((r) => r.verdict)).toEqual(['ok', 'ok', 'ok']);
    expect(report.findings.filter((f) => f.kind === 'fault').map((f) => f.message)).toHaveLength(3);
  });

  it('kill host ends the external relay (its process group) and the others go on', async () => {
    const report = await runTopology(config([LAB_RELAY, null], { rounds: 3 }), {
      faults: [{ action: 'kill-host', target: 0, round: 1 }],
    });
    expect(report.dead).toEqual([0, 1]);
    expect(report.externalRelays?.[0].exit).toBe('signal SIGKILL');
  });
});

describe('misbehaving external relays: a finding naming host and command, and the lab stays up', () => {
  const startFails = async (command: string, re: RegExp) => {
    const session = new TopologySession({ snapLen: 0 });
    await expect(session.start(config([command, null]), { startTimeoutMs: 4000 })).rejects.toThrow(re);
    await session.stop();
    return session;
  };

  it('exits at once', async () => {
    const cmd = fixture('exits-at-once.mjs');
    const session = await startFails(
      cmd,
      new RegExp(`relay h0 \\(command '${cmd}'\\) exited during start-up \\(exit code 3\\)`),
    );
    // Its last stderr line says why (a port taken, a bad flag) without a look at any log.
    expect(session.findings.map((f) => f.message)).toContain(
      `relay h0 (command '${cmd}') exited during start-up (exit code 3): relay: cannot start (fixture)`,
    );
    // The lab stays up: the same session runs a topology of its own relays next.
    await session.start(config([null, null], { rounds: 1 }));
    expect((await session.finished()).roundsCompleted).toBe(1);
    await session.stop();
  });

  it('never binds', async () => {
    const cmd = fixture('never-binds.mjs');
    await startFails(cmd, new RegExp(`relay h0 \\(command '${cmd}'\\) never listened on its loopback ports`));
  });

  it('never sends Hello', async () => {
    const cmd = fixture('never-hello.mjs');
    await startFails(cmd, new RegExp(`relay h0 \\(command '${cmd}'\\) never sent Hello to the controller`));
  });

  it('sends garbage', async () => {
    const cmd = fixture('sends-garbage.mjs');
    await startFails(cmd, new RegExp(`relay h0 \\(command '${cmd}'\\) sent the controller what it dropped`));
  });

  it('binds late: the ranks wait, the rounds run, a finding says so', async () => {
    const cmd = `${fixture('lab-relay.mjs')} --delay 5500`;
    const report = await runTopology(config([cmd, null], { rounds: 2 }));
    expect(report.verdict).toBe('ok');
    expect(report.findings.map((f) => f.message).join('\n')).toMatch(
      new RegExp(
        `relay h0 \\(command '${cmd}'\\) listened on its (data|control) loopback port \\d+ ms after`,
      ),
    );
  });

  it('hangs at shutdown: ended by the lab, and said so', async () => {
    const cmd = `${fixture('lab-relay.mjs')} --hang`;
    const report = await runTopology(config([cmd, null], { rounds: 2 }));
    expect(report.verdict).toBe('ok');
    expect(report.externalRelays?.[0].stopped).toBe('killed');
    expect(report.findings.map((f) => f.message).join('\n')).toContain(
      `relay h0 (command '${cmd}') hung at shutdown`,
    );
  });
});
