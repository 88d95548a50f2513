// Supervising rank processes. A rank is a real OS process running the bundled
// out/node/rank.mjs, started by the current RankSpawner (rank-spawner.ts):
// a plain Node child in browser mode and the CLI, an Electron utility
// process in the Electron shell. It must never outlive the process that
// spawned it: it watches its parent channel and its parent pid, and a Node
// child on Linux is also started under a kernel parent-death signal.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RANK_SPEC_ENV, type RankSpec, type RankToParent } from '../rank/spec';
import { rankSpawner, type RankChild, type RankSpawner } from './rank-spawner';

/**
 * Ranks run below the engine, not far below: at nice 10 (a ninth of the engine's CPU weight) a
 * fold round's ranks, which encode and then adopt all at once at its two ends, waited for every
 * wakeup of the engine and, under any other load, starved; at nice 5 (about a third) the engine
 * still wins a contended core and the ranks keep moving (1x4 at 256 KiB on a shared 2-core
 * machine: fold's median round 27 ms at nice 5 against 34-57 ms at nice 10, interleaved runs).
 */
const RANK_NICE = 5;

/** The folder of relay-lab's package.json, found from wherever this module runs (sources, the CLI bundle, Electron's main). */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    const pkg = path.join(dir, 'package.json');
    if (fs.existsSync(pkg)) {
      try {
        if ((JSON.parse(fs.readFileSync(pkg, 'utf8')) as { name?: string }).name === 'relay-lab') return dir;
      } catch {
        // not ours, keep walking up
      }
    }
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  throw new Error(
    "cannot locate relay-lab's package.json above " + path.dirname(fileURLToPath(import.meta.url)),
  );
}

/** Finds out/node/rank.mjs from wherever this module runs. */
export function rankEntryPath(): string {
  const override = process.env.RELAY_LAB_RANK_ENTRY;
  if (override) return override;
  try {
    return path.join(packageRoot(), 'out', 'node', 'rank.mjs');
  } catch {
    throw new Error('cannot locate out/node/rank.mjs (run `npm run build:node`)');
  }
}

export interface RankProcessEvents {
  onMessage?: (msg: RankToParent) => void;
  onExit?: (code: number | null, signal: NodeJS.Signals | null) => void;
  onStderr?: (line: string) => void;
}

export class RankProcess {
  readonly child: RankChild;
  exited = false;
  exitCode: number | null = null;
  exitSignal: NodeJS.Signals | null = null;
  private readonly exitWaiters: (() => void)[] = [];
  /**
   * True once the rank runs as Node (its first IPC message): from then on the
   * kernel's parent-death signal is armed. Before that the process may still
   * be setpriv, and a SIGSTOP there would leave a stopped process that no
   * parent death can end: a stop asked for before is held until then.
   */
  private running: boolean;
  private heldStop = false;
  /** True while the process is held by SIGSTOP (asked for, held or delivered) and not continued. */
  stopped = false;
  /** A SIGKILL was sent: the exit is on its way (a run's outcome waits for it). */
  killSent = false;

  constructor(
    readonly spec: RankSpec,
    events: RankProcessEvents = {},
    /** Where the rank runs: this machine's current spawner unless given (a Slurm job's other nodes). */
    spawner: RankSpawner = rankSpawner(),
  ) {
    // Only a rank that reports over IPC says when it runs; others are signalled at once.
    this.running = spec.report !== 'ipc';
    const entry = rankEntryPath();
    const env: NodeJS.ProcessEnv = { ...process.env, [RANK_SPEC_ENV]: JSON.stringify(spec) };
    // A rank does no TLS: loading extra CA certificates only slows its start.
    delete env.NODE_EXTRA_CA_CERTS;
    delete env.NODE_OPTIONS;
    // Never run a binary as plain Node by environment: Electron starts ranks as utility processes.
    delete env.ELECTRON_RUN_AS_NODE;
    this.child = spawner(entry, env, {
      onMessage: (m) => {
        if (!this.running) {
          this.running = true;
          if (this.heldStop) {
            this.heldStop = false;
            this.signal('SIGSTOP');
          }
        }
        events.onMessage?.(m as RankToParent);
      },
      onError: (e) => events.onStderr?.(`spawn failed: ${e.message}`),
      onStderrLine: (line) => events.onStderr?.(line),
      onExit: (code, signal) => {
        this.exited = true;
        this.exitCode = code;
        this.exitSignal = signal;
        for (const w of this.exitWaiters.splice(0)) w();
        events.onExit?.(code, signal);
      },
    });
    // Ranks run at a lower CPU priority than the engine: on a machine with
    // fewer cores than ranks, the process hosting relays and controller
    // keeps serving its sockets and timers on time.
    if (this.child.pid) {
      try {
        os.setPriority(this.child.pid, RANK_NICE);
      } catch {
        // not permitted here: ranks keep the default priority
      }
    }
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  signal(sig: NodeJS.Signals): boolean {
    if (this.exited) return false;
    if (!this.running && (sig === 'SIGSTOP' || sig === 'SIGCONT')) {
      this.heldStop = sig === 'SIGSTOP';
      this.stopped = this.heldStop;
      return true;
    }
    const sent = this.child.signal(sig);
    // Resume (SIGCONT) must stay possible whatever the rank was declared meanwhile.
    if (sent && sig === 'SIGSTOP') this.stopped = true;
    if (sent && sig === 'SIGCONT') this.stopped = false;
    if (sent && sig === 'SIGKILL') this.killSent = true;
    return sent;
  }

  send(msg: unknown): void {
    if (!this.exited) this.child.send(msg);
  }

  waitExit(): Promise<void> {
    if (this.exited) return Promise.resolve();
    return new Promise((r) => this.exitWaiters.push(r));
  }

  /** SIGKILL (works on a stopped process too) and wait for the exit. */
  async kill(): Promise<void> {
    this.signal('SIGKILL');
    await this.waitExit();
  }
}

/** True while a process with this pid exists (zombies included, as `kill -0` sees them). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
