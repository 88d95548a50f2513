// Ranks as Electron utility processes, without the Electron binary: a
// stand-in for utilityProcess.fork that behaves as Electron's does (a real
// OS process, messages through process.parentPort, 'exit' with a code only,
// kill() = SIGTERM) runs a whole topology of real rank processes through
// utilityRankSpawner. The stand-in gives each child a process.parentPort
// (as a utility process has) so the rank's utility-process path is the one
// exercised.
import { afterEach, describe, expect, it } from 'vitest';
import { fork } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { DEFAULT_TOPOLOGY } from '@shared/lab/topology';
import { nodeRankSpawner, setRankSpawner } from '../engine/rank-spawner';
import { pidAlive } from '../engine/rank-process';
import { runTopology } from '../lab/run-topology';
import type { TopologySession } from '../lab/topology-session';
import type { UtilityProcessApi, UtilityProcessLike } from './electron-api';
import { utilityRankSpawner } from './utility-rank-spawner';

/** What a utility process has and a Node child lacks: process.parentPort (posts, and 'message' events with data). */
const PARENT_PORT_SHIM =
  'data:text/javascript,' +
  encodeURIComponent(
    "import { EventEmitter } from 'node:events';" +
      'const port = new EventEmitter();' +
      'port.postMessage = (m) => process.send && process.send(m);' +
      "process.on('message', (m) => port.emit('message', { data: m }));" +
      'process.parentPort = port;',
  );

const forks: { modulePath: string; options: Record<string, unknown> }[] = [];

const standIn: UtilityProcessApi = {
  fork(modulePath, args, options) {
    forks.push({ modulePath, options: options as Record<string, unknown> });
    const child = fork(modulePath, args, {
      env: options.env,
      execArgv: ['--import', PARENT_PORT_SHIM],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const emitter = new EventEmitter() as EventEmitter & UtilityProcessLike;
    Object.defineProperties(emitter, {
      pid: { get: () => (child.exitCode === null && child.signalCode === null ? child.pid : undefined) },
      stderr: { value: child.stderr },
    });
    emitter.postMessage = (m) => void (child.connected && child.send(m as never));
    emitter.kill = () => child.kill('SIGTERM');
    child.on('spawn', () => emitter.emit('spawn'));
    child.on('message', (m) => emitter.emit('message', m));
    // Electron reports a code only, whatever ended the process.
    child.on('exit', (code, signal) => emitter.emit('exit', code ?? (signal ? 128 + 9 : 0)));
    return emitter;
  },
};

afterEach(() => setRankSpawner(nodeRankSpawner));

describe('ranks as Electron utility processes', () => {
  it('runs a whole topology, kills and pauses ranks by pid, and leaves no process', async () => {
    setRankSpawner(utilityRankSpawner(standIn));
    let session: TopologySession | null = null;
    const report = await runTopology(
      {
        ...DEFAULT_TOPOLOGY,
        ranksPerHost: [2, 2],
        modelBytes: 4096,
        rounds: 4,
        roundIntervalMs: 0,
        stalenessMs: 3000,
      },
      {
        faults: [
          { action: 'kill-rank', target: 3, round: 1 },
          { action: 'pause-rank', target: 1, round: 2 },
        ],
        onSession: (s) => (session = s),
      },
    );
    const ranks = (session as TopologySession | null)!.activeCluster!.ranks;
    expect(forks).toHaveLength(4);
    for (const f of forks) {
      expect(f.modulePath).toMatch(/out[\\/]node[\\/]rank\.mjs$/);
      expect(f.options.serviceName).toBe('Relay Lab rank');
      // No RunAsNode: the RunAsNode fuse can be off in a packaged app.
      expect((f.options.env as NodeJS.ProcessEnv).ELECTRON_RUN_AS_NODE).toBeUndefined();
    }
    expect(report.roundsCompleted).toBe(4);
    expect(report.dead).toContain(3);
    // The kill was a real SIGKILL to the pid, reported as such though the process API gives only a code.
    expect(ranks[3].exitSignal).toBe('SIGKILL');
    const pids = ranks.map((r) => r.pid).filter((p): p is number => p !== undefined);
    await expect.poll(() => pids.filter(pidAlive), { timeout: 10_000 }).toEqual([]);
  }, 120_000);
});
