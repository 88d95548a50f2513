// A real flodl-shaped cluster as separate OS processes (`relay-lab
// controller`, `relay`, `rank`, CLI.md 3) for the tap tests: the relay's
// --controller can be pointed at a tap instead of the controller itself.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'relay-lab.mjs');

export interface RoleProcess {
  child: ChildProcess;
  waitFor(re: RegExp): Promise<RegExpMatchArray>;
  done: Promise<{ code: number | null; out: string; err: string }>;
}

export function spawnRole(args: string[], started: ChildProcess[]): RoleProcess {
  const child = spawn(process.execPath, [bin, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let out = '';
  let err = '';
  const waiters: [RegExp, (m: RegExpMatchArray) => void][] = [];
  const check = () => {
    for (const [re, res] of waiters) {
      const m = err.match(re) ?? out.match(re);
      if (m) res(m);
    }
  };
  child.stdout!.on('data', (d) => {
    out += d;
    check();
  });
  child.stderr!.on('data', (d) => {
    err += d;
    check();
  });
  return {
    child,
    waitFor: (re) => new Promise((r) => waiters.push([re, r])),
    // 'close', not 'exit': 'exit' can come before the stdout pipe is drained, and a
    // loaded machine then hands the test an empty or cut JSON report.
    done: new Promise((r) => child.on('close', (code) => r({ code, out, err }))),
  };
}

/** A controller for one host of `ranks` ranks; resolves with its port. */
export async function startController(salt: string, worldSize: number, started: ChildProcess[]) {
  const controller = spawnRole(
    ['controller', '--port', '0', '--world-size', String(worldSize), '--salt', salt, '--json'],
    started,
  );
  const port = Number((await controller.waitFor(/listening on 127\.0\.0\.1:(\d+)/))[1]);
  return { controller, port };
}

/** A host's relay (default h0) dialling `controllerPort` (the controller's or a tap's), and its ranks running `rounds` rounds. */
export async function startHost(
  o: {
    salt: string;
    ranks: number[];
    worldSize: number;
    controllerPort: number;
    rounds: number;
    host?: string;
  },
  started: ChildProcess[],
) {
  const relay = spawnRole(
    [
      'relay',
      '--host',
      o.host ?? 'h0',
      '--controller',
      `127.0.0.1:${o.controllerPort}`,
      '--ranks',
      o.ranks.join(','),
      '--world-size',
      String(o.worldSize),
      '--salt',
      o.salt,
      '--data-port',
      '0',
      '--control-port',
      '0',
    ],
    started,
  );
  const m = await relay.waitFor(/data 127\.0\.0\.1:(\d+) control 127\.0\.0\.1:(\d+)/);
  const ranks = o.ranks.map((r) =>
    spawnRole(
      [
        'rank',
        '--rank',
        String(r),
        '--world-size',
        String(o.worldSize),
        '--salt',
        o.salt,
        '--data-port',
        m[1]!,
        '--control-port',
        m[2]!,
        '--rounds',
        String(o.rounds),
        '--model-bytes',
        '4KiB',
        '--json',
      ],
      started,
    ),
  );
  return { relay, ranks };
}

export function killAll(started: ChildProcess[]): void {
  for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}
