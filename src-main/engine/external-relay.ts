// An external relay: a host's relay run as a command under flodl's launch
// contract (WIRE.md 4.2; src-shared/lab/relay-spec.ts), a flodl build or
// any program that reads FLODL_INTERNAL_RELAY_JSON. The lab starts it
// without a shell, in a process group of its own (kill host and stop end
// the whole group, whatever the command forks), under the kernel's
// parent-death signal where available (as a rank: it must not outlive the
// lab), passes its stdout and stderr on line by line, and keeps its exit.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { encodeRelaySpec, RELAY_SPEC_ENV, type RelaySpecJson } from '@shared/lab/relay-spec';
import { shellWords } from '@shared/lab/shell-words';
import { lineSplitter } from './rank-spawner';

const SETPRIV = '/usr/bin/setpriv';

export interface ExternalRelayEvents {
  onLine?: (stream: 'stdout' | 'stderr', line: string) => void;
  onExit?: (code: number | null, signal: NodeJS.Signals | null) => void;
  /** The command could not be started at all (no such program, not executable). */
  onSpawnError?: (message: string) => void;
}

/** The program a command runs, resolved as execvp would (PATH for a bare name), or null. */
export function resolveProgram(program: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const isExec = (p: string) => {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (program.includes('/')) {
    const p = path.resolve(program);
    return isExec(p) ? p : null;
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, program);
    if (isExec(p)) return p;
  }
  return null;
}

/** What a reproduction records of an external relay: its command and the SHA-256 of its program file. */
export interface ExternalRelayIdentity {
  host: number;
  command: string;
  /** The resolved program (symlinks followed), or null when it cannot be found. */
  program: string | null;
  sha256: string | null;
}

export function identifyRelayCommand(host: number, command: string): ExternalRelayIdentity {
  const words = shellWords(command);
  const found = words.length > 0 ? resolveProgram(words[0]) : null;
  if (!found) return { host, command, program: null, sha256: null };
  const real = fs.realpathSync(found);
  const sha256 = createHash('sha256').update(fs.readFileSync(real)).digest('hex');
  return { host, command, program: real, sha256 };
}

export class ExternalRelay {
  readonly child: ChildProcess;
  readonly words: string[];
  exited = false;
  exitCode: number | null = null;
  exitSignal: NodeJS.Signals | null = null;
  readonly startedAt = performance.now();
  exitedAt = 0;
  private readonly exitWaiters: (() => void)[] = [];

  constructor(
    readonly command: string,
    spec: RelaySpecJson,
    events: ExternalRelayEvents = {},
  ) {
    this.words = shellWords(command);
    if (this.words.length === 0) throw new Error('the relay command names no program');
    const env: NodeJS.ProcessEnv = { ...process.env, [RELAY_SPEC_ENV]: encodeRelaySpec(spec) };
    // The older name must not carry a stale spec of some other session.
    delete env.FLODL_RELAY_JSON;
    const usePdeath = process.platform === 'linux' && fs.existsSync(SETPRIV);
    const [program, ...args] = this.words;
    this.child = spawn(
      usePdeath ? SETPRIV : program,
      usePdeath ? ['--pdeathsig', 'KILL', '--', program, ...args] : args,
      // Own process group (detached): kill host and stop signal the group, the command's children too.
      { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let spawnFailed = false;
    this.child.on('error', (e) => {
      spawnFailed = true;
      events.onSpawnError?.(e.message);
      this.markExited(null, null, events);
    });
    for (const stream of ['stdout', 'stderr'] as const) {
      const s = this.child[stream];
      s?.setEncoding('utf8');
      s?.on(
        'data',
        lineSplitter((line) => {
          if (stream === 'stderr' && line.trim() !== '') this.lastStderrLine = line.trim().slice(0, 300);
          events.onLine?.(stream, line);
        }),
      );
    }
    this.child.on('exit', (code, signal) => {
      if (spawnFailed) return;
      // Its exit is often reported before the last lines it wrote, which say why: those are read
      // first (at most 250 ms: a child it left may hold the pipe open).
      const at = performance.now();
      void this.stderrRead(250).then(() => this.markExited(code, signal, events, at));
    });
  }

  /** Its last line on stderr (at most 300 characters): why it stopped, in its own words. */
  lastStderrLine: string | null = null;

  private stderrRead(ms: number): Promise<void> {
    const err = this.child.stderr;
    if (!err || err.readableEnded || err.destroyed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      err.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private markExited(
    code: number | null,
    signal: NodeJS.Signals | null,
    events: ExternalRelayEvents,
    at = performance.now(),
  ): void {
    if (this.exited) return;
    this.exited = true;
    this.exitCode = code;
    this.exitSignal = signal;
    this.exitedAt = at;
    for (const w of this.exitWaiters.splice(0)) w();
    events.onExit?.(code, signal);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Signals the whole process group (the command and whatever it started). */
  signal(sig: NodeJS.Signals): boolean {
    const pid = this.child.pid;
    if (pid === undefined) return false;
    try {
      process.kill(-pid, sig);
      return true;
    } catch {
      try {
        return this.child.kill(sig);
      } catch {
        return false;
      }
    }
  }

  waitExit(ms = Infinity): Promise<boolean> {
    if (this.exited) return Promise.resolve(true);
    return new Promise((r) => {
      const t = Number.isFinite(ms) ? setTimeout(() => r(false), ms) : null;
      this.exitWaiters.push(() => {
        if (t) clearTimeout(t);
        r(true);
      });
    });
  }

  /**
   * Ends the relay: it normally leaves by itself once its ranks and upstream are gone (flodl's
   * shutdown triggers); after `graceMs` the group gets SIGTERM, then SIGKILL. Returns how it ended.
   */
  async stop(graceMs: number): Promise<'exited' | 'terminated' | 'killed'> {
    if (await this.waitExit(graceMs)) {
      this.signal('SIGKILL'); // leftovers of the group (a wrapper's child)
      return 'exited';
    }
    this.signal('SIGTERM');
    if (await this.waitExit(1000)) {
      this.signal('SIGKILL');
      return 'terminated';
    }
    this.signal('SIGKILL');
    await this.waitExit(2000);
    return 'killed';
  }

  /** Kill host: SIGKILL to the group at once. */
  kill(): void {
    this.signal('SIGKILL');
  }

  /** "exit code 0", "signal SIGKILL", "running". */
  describeExit(): string {
    if (!this.exited) return 'running';
    return this.exitSignal ? `signal ${this.exitSignal}` : `exit code ${this.exitCode}`;
  }
}
