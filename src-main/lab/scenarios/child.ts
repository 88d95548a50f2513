// A small real OS process for the reproductions that are about a process
// (a peer that vanishes, a reader that trusts a hostile length). Like the
// ranks, it runs under `setpriv --pdeathsig KILL` on Linux so it cannot
// outlive the lab even while stopped, and it reports on stdout as JSON lines.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';

const SETPRIV = '/usr/bin/setpriv';

export interface ScriptProcess {
  child: ChildProcess;
  pid: number;
  /** The JSON lines printed so far. */
  lines: unknown[];
  /** Resolves with the next JSON line matching `pred` (rejects after `timeoutMs`). */
  next(pred: (v: Record<string, unknown>) => boolean, timeoutMs: number): Promise<Record<string, unknown>>;
  exited: Promise<void>;
  kill(): Promise<void>;
}

/** Runs `script` (plain JavaScript, CommonJS) with `args` in a fresh Node process. */
export function runScript(script: string, args: string[]): ScriptProcess {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  delete env.NODE_OPTIONS;
  // Inside Electron, process.execPath is the Electron binary: run it as plain Node.
  env.ELECTRON_RUN_AS_NODE = '1';
  const nodeArgs = ['-e', script, '--', ...args];
  const child = fs.existsSync(SETPRIV)
    ? spawn(SETPRIV, ['--pdeathsig', 'KILL', process.execPath, ...nodeArgs], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(process.execPath, nodeArgs, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  const waiters: {
    pred: (v: Record<string, unknown>) => boolean;
    resolve: (v: Record<string, unknown>) => void;
  }[] = [];
  let buf = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (d: string) => {
    buf += d;
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      let v: Record<string, unknown>;
      try {
        v = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      lines.push(v);
      for (const w of waiters.splice(0)) {
        if (w.pred(v)) w.resolve(v);
        else waiters.push(w);
      }
    }
  });
  child.stderr!.resume();
  const exited = new Promise<void>((r) => {
    if (child.exitCode !== null || child.signalCode !== null) r();
    else child.once('exit', () => r());
  });
  return {
    child,
    pid: child.pid!,
    lines,
    exited,
    next(pred, timeoutMs) {
      const seen = lines.find(pred);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const t = setTimeout(
          () => reject(new Error(`child ${child.pid}: no expected report within ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({ pred, resolve: (v) => (clearTimeout(t), resolve(v)) });
        void exited.then(() =>
          setTimeout(() => reject(new Error(`child ${child.pid} exited without the expected report`)), 50),
        );
      });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
