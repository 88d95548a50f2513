// How a rank process is started: one small interface, two implementations.
// Browser mode and the CLI start ranks as plain Node children (here); the
// Electron shell starts them as Electron utility processes
// (src-main/electron/utility-rank-spawner.ts), real OS processes that need no
// ELECTRON_RUN_AS_NODE, so a packaged app can turn the RunAsNode fuse off.
// RankProcess (rank-process.ts) supervises whatever the spawner returns.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { RANK_PARENT_ENV } from '../rank/spec';

export interface RankChildEvents {
  onMessage(msg: unknown): void;
  onExit(code: number | null, signal: NodeJS.Signals | null): void;
  onError(e: Error): void;
  onStderrLine(line: string): void;
}

/** A started rank process, as the supervisor sees it. */
export interface RankChild {
  readonly pid: number | undefined;
  /** Delivers a signal to the rank's OS process (SIGSTOP/SIGCONT for pause, SIGKILL for kill). */
  signal(sig: NodeJS.Signals): boolean;
  /** A message to the rank over its parent channel (dropped once the channel is closed). */
  send(msg: unknown): void;
}

/** Starts the rank entry (out/node/rank.mjs) with this environment. */
export type RankSpawner = (entry: string, env: NodeJS.ProcessEnv, events: RankChildEvents) => RankChild;

/** Splits a stream of text into lines for `onLine`. */
export function lineSplitter(onLine: (line: string) => void): (chunk: string) => void {
  let buf = '';
  return (chunk) => {
    buf += chunk;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      onLine(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  };
}

const SETPRIV = '/usr/bin/setpriv';

/**
 * A plain Node child over an IPC channel. On Linux it is started under
 * `setpriv --pdeathsig KILL`, so the kernel kills it when this process dies,
 * even while it is stopped (SIGSTOP) and cannot watch anything itself.
 */
export const nodeRankSpawner: RankSpawner = (entry, env, events) => {
  const usePdeath = process.platform === 'linux' && fs.existsSync(SETPRIV);
  const cmd = usePdeath ? SETPRIV : process.execPath;
  // Node flags for every rank, for a developer's profiling (e.g. '--cpu-prof --cpu-prof-dir=DIR').
  const nodeArgs = (process.env.RELAY_LAB_RANK_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const args = usePdeath
    ? ['--pdeathsig', 'KILL', '--', process.execPath, ...nodeArgs, entry]
    : [...nodeArgs, entry];
  // The rank leaves at once if its parent is already someone else (a parent that died before the signal was armed).
  const child = spawn(cmd, args, {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    env: { ...env, [RANK_PARENT_ENV]: String(process.pid) },
  });
  child.on('message', (m) => events.onMessage(m));
  child.on('error', (e) => events.onError(e));
  child.stderr?.setEncoding('utf8');
  child.stderr?.on(
    'data',
    lineSplitter((l) => events.onStderrLine(l)),
  );
  child.on('exit', (code, signal) => events.onExit(code, signal));
  return {
    get pid() {
      return child.pid;
    },
    signal(sig) {
      try {
        return child.kill(sig);
      } catch {
        return false;
      }
    },
    send(msg) {
      if (child.connected) child.send(msg as never);
    },
  };
};

let current: RankSpawner = nodeRankSpawner;

/** The spawner new ranks are started with. */
export function rankSpawner(): RankSpawner {
  return current;
}

/** Chooses how ranks are started from now on (the Electron shell sets utility processes, once, at start). */
export function setRankSpawner(spawner: RankSpawner): void {
  current = spawner;
}
