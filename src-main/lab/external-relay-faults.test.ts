// Pause, resume and kill host behind an external relay (Relay Lab's own relay
// run as a command, `relay --from-env`), on real processes: the same schedule
// run behind the lab's own relay gives the same verdicts, accepted sets and
// consensus digests ([2, 2]: every fold sums at most two terms, so the bytes
// are the same on every run); kill host leaves no process of that host.
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_TOPOLOGY, type TopologyConfig } from '@shared/lab/topology';
import { runTopology, type RunReport } from './run-topology';
import type { Fault } from './round-driver';
import { TopologySession } from './topology-session';
import { LabHost } from './lab-host';
import type { Finding, RoundReport } from '@shared/lab/records';
import { pidAlive } from '../engine/rank-process';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const LAB_RELAY = `node ${path.join(root, 'bin', 'relay-lab.mjs')} relay --from-env`;

const config = (over: Partial<TopologyConfig> = {}): TopologyConfig => ({
  ...DEFAULT_TOPOLOGY,
  ranksPerHost: [2, 2],
  modelBytes: 16 * 1024,
  rounds: 4,
  roundIntervalMs: 0,
  seed: 3,
  ...over,
});

/** What must not depend on whose relay serves a host. */
const outcome = (r: RunReport) => ({
  verdict: r.verdict,
  dead: r.dead,
  rounds: r.rounds.map((x) => ({
    round: x.round,
    verdict: x.verdict,
    accepted: x.accepted,
    consensusSha256: x.consensusSha256,
  })),
});

async function both(faults: Fault[], over: Partial<TopologyConfig> = {}) {
  const own = await runTopology(config(over), { faults });
  const ext = await runTopology(config({ ...over, relayCommands: [LAB_RELAY, null] }), { faults });
  return { own, ext };
}

describe('pause and resume a rank behind an external relay', () => {
  it('paused for seconds, resumed before its staleness: the stalled round and the rest as behind the lab relay', async () => {
    const faults: Fault[] = [
      { action: 'pause-rank', target: 1, round: 3 },
      { action: 'resume-rank', target: 1, round: 3, afterMs: 3000 },
    ];
    const { own, ext } = await both(faults, { rounds: 6, stalenessMs: 10_000 });
    expect(outcome(own)).toMatchObject({ verdict: 'ok', dead: [] });
    expect(own.rounds.every((r) => r.verdict === 'ok' && r.accepted.length === 4)).toBe(true);
    expect(outcome(ext)).toEqual(outcome(own));
    // The round held by the pause is named stalled on the paused rank alone (rank 0 had deposited).
    const stalls = (r: RunReport) =>
      r.findings.filter((f) => f.kind === 'stalled').map((f) => [f.round, f.ranks]);
    expect(stalls(own)).toEqual([[3, [1]]]);
    expect(stalls(ext)).toEqual(stalls(own));
  }, 90_000);

  it('paused past its staleness (declared dead), resumed the round after: the same rounds as behind the lab relay', async () => {
    const faults: Fault[] = [
      { action: 'pause-rank', target: 1, round: 1 },
      { action: 'resume-rank', target: 1, round: 2 },
    ];
    const { own, ext } = await both(faults, { stalenessMs: 1000 });
    expect(outcome(own)).toMatchObject({ verdict: 'ok', dead: [1] });
    expect(own.rounds.slice(1).every((r) => r.verdict === 'ok' && !r.accepted.includes(1))).toBe(true);
    expect(outcome(ext)).toEqual(outcome(own));
  }, 90_000);

  it('paused past its staleness, resumed as soon as it is dead: its late frame reaches the relay before the round is judged, the relay drops it, and the round is as behind the lab relay', async () => {
    const faults: Fault[] = [
      { action: 'pause-rank', target: 1, round: 1 },
      { action: 'resume-rank', target: 1, round: 1, afterDead: [1] },
      // The consensus reaches h1 late (500 ms a write): round 1 is judged well after rank 1's late frame.
      {
        action: 'link-fault',
        target: -1,
        round: 1,
        link: 'h1.uplink.data',
        fault: { dir: 'down', latencyMs: 500 },
      },
      { action: 'link-fault', target: -1, round: 2, link: 'h1.uplink.data', fault: null },
    ];
    const own = await runTopology(config({ stalenessMs: 1000 }), { faults });
    // Rounds judged when rank 1's round-1 frame (its second) passed the lab's tap toward the relay.
    let judgedBeforeLateFrame = -1;
    const ext = await runTopology(config({ stalenessMs: 1000, relayCommands: [LAB_RELAY, null] }), {
      faults,
      onRoundsStart: (s) => {
        let frames = 0;
        s.activeCluster!.tap.onRecord((u) => {
          if (u.link === 'h0.r1.data' && u.dir === 'up' && u.kind === 'RoundFrame' && ++frames === 2)
            judgedBeforeLateFrame = s.requireRounds().reports.length;
        });
      },
    });
    expect(judgedBeforeLateFrame).toBe(1);
    expect(outcome(own)).toMatchObject({ verdict: 'ok', dead: [1] });
    expect(own.rounds[1].accepted).toEqual([0, 2, 3]);
    expect(outcome(ext)).toEqual(outcome(own));
    expect(ext.findings.filter((f) => f.kind === 'mismatch')).toEqual([]);
  }, 90_000);
});

/**
 * The pids of every live process in process group `pgid` (from /proc). A zombie is not counted:
 * it has exited; an orphan's waits for its reaper (here init), which is no part of the lab.
 */
function groupPids(pgid: number): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, the rest follows the last ')'.
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

describe('kill host of an external-relay host', () => {
  it('its relay (the whole process group, a forking wrapper too) and its ranks are gone, the controller declares them dead, the other host goes on', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-killhost-'));
    // A wrapper that forks the relay (no exec): the relay runs as the wrapper's child.
    const wrapper = path.join(dir, 'relay.sh');
    fs.writeFileSync(
      wrapper,
      `#!/bin/sh\n"${process.execPath}" "${path.join(root, 'bin', 'relay-lab.mjs')}" relay --from-env\nstatus=$?\necho "wrapper: relay exited $status"\nexit $status\n`,
      { mode: 0o755 },
    );
    let seen: number[] = [];
    // Set once, while the session still runs, no process of h0 is left (checked every 20 ms).
    let goneWhileRunning = false;
    let watch: NodeJS.Timeout | undefined;
    const lines: string[] = [];
    const report = await runTopology(
      // Rounds 200 ms apart: the killed processes have time to leave before the session stops.
      config({ relayCommands: [wrapper, null], rounds: 6, roundIntervalMs: 200 }),
      {
        faults: [{ action: 'kill-host', target: 0, round: 2 }],
        onExternalRelayLine: (_h, _s, line) => lines.push(line),
        onRoundsStart: (s) => {
          const c = s.activeCluster!;
          const pgid = c.external[0]!.pid!;
          const ranks = c.hostRanks[0].map((r) => c.ranks[r].pid!);
          seen = groupPids(pgid);
          watch = setInterval(() => {
            if (!c.killedHosts.has(0) || groupPids(pgid).length > 0 || ranks.some(pidAlive)) return;
            goneWhileRunning = !c.stopping;
            clearInterval(watch);
          }, 20);
        },
      },
    ).catch((e: Error) => {
      throw new Error(`${e.message}\n${lines.join('\n')}`);
    });
    clearInterval(watch);
    fs.rmSync(dir, { recursive: true, force: true });
    // The wrapper and the relay it forked.
    expect(seen.length, lines.join('\n')).toBeGreaterThanOrEqual(2);
    expect(goneWhileRunning).toBe(true);
    expect(report.dead).toEqual([0, 1]);
    expect(report.rounds.map((r) => [r.round, r.verdict, r.accepted])).toEqual([
      [0, 'ok', [0, 1, 2, 3]],
      [1, 'ok', [0, 1, 2, 3]],
      [2, 'ok', [2, 3]],
      [3, 'ok', [2, 3]],
      [4, 'ok', [2, 3]],
      [5, 'ok', [2, 3]],
    ]);
    expect(report.verdict).toBe('ok');
    expect(report.externalRelays?.[0].exit).toBe('signal SIGKILL');
    // The lab ended it: said so, not as a relay that left on its own.
    const said = report.findings.map((f) => `${f.severity}: ${f.message}`);
    expect(said).toContain(`info: relay h0 (command '${wrapper}') ended by kill host (signal SIGKILL)`);
    expect(said.filter((m) => m.startsWith('error'))).toEqual([]);
  }, 60_000);
});

/** The process state letter from /proc (T = stopped), or null where /proc is absent. */
function procState(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return null;
  }
}

describe('the window path: LabHost commands on a session whose host h0 runs an external relay', () => {
  it('pause rank, resume rank, kill host: the rank stops and rejoins, the host leaves no process, the rounds go on', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-window-ext-'));
    const session = new TopologySession({});
    const host = new LabHost(session, { tracesDir: dir, workDir: dir });
    const rounds: RoundReport[] = [];
    const findings: Finding[] = [];
    host.subscribe((b) => {
      for (const e of b.events) {
        if (e.type === 'round') rounds.push(e.report);
        if (e.type === 'finding') findings.push(e.finding);
      }
    });
    try {
      const started = await host.command({
        type: 'start',
        config: config({ relayCommands: [LAB_RELAY, null], rounds: 0, stalenessMs: 30_000 }),
      });
      expect(started).toMatchObject({ ok: true });
      const c = session.activeCluster!;
      const rank = (r: number) => session.snapshot().ranks[r];
      await expect.poll(() => rounds.length, { timeout: 60_000 }).toBeGreaterThanOrEqual(2);

      expect(await host.command({ type: 'pauseRank', rank: 1 })).toMatchObject({ ok: true });
      expect(rank(1).state).toBe('paused');
      const pid1 = rank(1).pid!;
      if (procState(pid1) !== null) await expect.poll(() => procState(pid1), { timeout: 10_000 }).toBe('T');
      // The round under way cannot end without rank 1: it stalls on rank 1 alone (rank 0 is behind
      // the same relay and deposited), and no further round starts.
      const heldAt = session.snapshot().roundsCompleted;
      await expect.poll(() => findings.some((f) => f.kind === 'stalled'), { timeout: 60_000 }).toBe(true);
      expect(findings.filter((f) => f.kind === 'stalled').map((f) => f.ranks)).toEqual([[1]]);
      expect(session.snapshot().roundsCompleted).toBeLessThanOrEqual(heldAt + 1);

      expect(await host.command({ type: 'resumeRank', rank: 1 })).toMatchObject({ ok: true });
      expect(rank(1).state).toBe('alive');
      const resumedIn = session.snapshot().round;
      await expect
        .poll(() => rounds.filter((r) => r.round > resumedIn).length, { timeout: 60_000 })
        .toBeGreaterThanOrEqual(3);
      expect(
        rounds
          .filter((r) => r.round >= resumedIn)
          .every((r) => r.verdict === 'ok' && r.accepted.length === 4),
      ).toBe(true);

      const pgid = c.external[0]!.pid!;
      const h0 = [rank(0).pid!, rank(1).pid!];
      expect(groupPids(pgid).length).toBeGreaterThan(0);
      expect(await host.command({ type: 'killHost', host: 0 })).toMatchObject({ ok: true });
      const killedIn = session.snapshot().round;
      await expect
        .poll(() => [0, 1].map((r) => rank(r).state), { timeout: 60_000 })
        .toEqual(['dead', 'dead']);
      expect(session.snapshot().hosts[0].state).toBe('dead');
      await expect
        .poll(() => rounds.filter((r) => r.round > killedIn).length, { timeout: 60_000 })
        .toBeGreaterThanOrEqual(3);
      // The controller declared them dead and the rounds go on with h1 alone, each checked bit for bit.
      expect(c.dead.isDead(0) && c.dead.isDead(1)).toBe(true);
      const later = rounds.filter((r) => r.round > killedIn);
      expect(later.every((r) => r.verdict === 'ok' && r.accepted.join() === '2,3')).toBe(true);
      // Nothing of h0 is left running while the session goes on (a killed process takes a moment to leave).
      await expect.poll(() => groupPids(pgid), { timeout: 10_000 }).toEqual([]);
      await expect.poll(() => h0.filter(pidAlive), { timeout: 10_000 }).toEqual([]);
      expect(findings.filter((f) => f.severity === 'error').map((f) => f.message)).toEqual([]);
      expect(findings.map((f) => f.message)).toContain(
        `relay h0 (command '${LAB_RELAY}') ended by kill host (signal SIGKILL)`,
      );
    } finally {
      await host.shutdown();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
