// A child process that must not outlive this one (issue 30 item 18): on Linux
// it is started under `setpriv --pdeathsig KILL`, so the kernel ends it the
// moment this process ends, however it ends (exit, crash, SIGKILL), even a
// child too busy or stopped to notice. Elsewhere it is a plain spawn. The
// command line's ranks (engine/rank-spawner.ts) and scenario children
// (lab/scenarios/child.ts) are started the same way.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';

const SETPRIV = '/usr/bin/setpriv';

export function spawnTied(cmd: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  if (process.platform === 'linux' && fs.existsSync(SETPRIV))
    return spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', cmd, ...args], options);
  return spawn(cmd, [...args], options);
}
