// Ranks in the Electron shell are Electron utility processes
// (utilityProcess.fork): real OS processes with their own pid, started by
// Chromium's process launcher, talking over a parent port. They need no
// ELECTRON_RUN_AS_NODE, so a packaged app runs with the RunAsNode fuse off.
// Pause and kill are real signals to the pid (UtilityProcess.kill() only
// sends SIGTERM). When the main process ends, Chromium ends its utility
// processes; a rank also leaves on its own when its parent pid changes.
import { lineSplitter, type RankSpawner } from '../engine/rank-spawner';
import type { UtilityProcessApi } from './electron-api';

/** A fatal signal this side sent, reported as the exit's signal the way a Node child reports it. */
const FATAL = new Set<NodeJS.Signals>(['SIGKILL', 'SIGTERM', 'SIGINT', 'SIGQUIT']);

export function utilityRankSpawner(
  utilityProcess: UtilityProcessApi,
  kill: (pid: number, sig: NodeJS.Signals) => void = process.kill.bind(process),
): RankSpawner {
  return (entry, env, events) => {
    const child = utilityProcess.fork(entry, [], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
      serviceName: 'Relay Lab rank',
    });
    let pid: number | undefined = child.pid;
    let fatalSent: NodeJS.Signals | null = null;
    let exited = false;
    child.on('spawn', () => (pid = child.pid));
    child.on('message', (m: unknown) => events.onMessage(m));
    child.on('error', (type: unknown, location: unknown) =>
      events.onError(new Error(`utility process error ${String(type)} at ${String(location)}`)),
    );
    child.stderr?.setEncoding?.('utf8');
    child.stderr?.on(
      'data',
      lineSplitter((l) => events.onStderrLine(l)),
    );
    child.on('exit', (code: unknown) => {
      exited = true;
      const n = typeof code === 'number' ? code : null;
      // A utility process reports only a code; the signal is known when it was ours.
      events.onExit(fatalSent ? null : n, fatalSent);
    });
    return {
      get pid() {
        return exited ? undefined : (child.pid ?? pid);
      },
      signal(sig) {
        const target = child.pid ?? pid;
        if (exited || !target) return false;
        try {
          kill(target, sig);
          if (FATAL.has(sig)) fatalSent = sig;
          return true;
        } catch {
          return false;
        }
      },
      send(msg) {
        if (!exited) child.postMessage(msg);
      },
    };
  };
}
