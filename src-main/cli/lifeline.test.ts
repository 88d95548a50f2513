// `relay-lab run` started as a person starts it (npx, npm exec, a shell) and
// one level of that chain killed with SIGKILL: nothing of the tree may remain,
// not the command line and not its ranks (issue 30 item 18: killing npx left
// the CLI and its 8 ranks running, out of sight). `npm start` already dies
// whole at every level (scripts/start.mjs); the CLI entry has the same watch.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { CHAOS_TAG_ENV, processesTagged } from '../chaos/runner';
import { repoRoot } from './testing/relay-lab-cli';

const RANKS = 4;
const RUN = ['run', '--topology', '2,2', '--model-bytes', '4096', '--rounds', '100000'];
const started: ChildProcess[] = [];

afterEach(() => {
  for (const c of started.splice(0)) {
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {
      // the group is gone
    }
  }
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `ok` holds or `limitMs` passes (a bound, not a timing claim); returns the last value. */
async function until<T>(f: () => T, ok: (v: T) => boolean, limitMs: number): Promise<T> {
  const end = Date.now() + limitMs;
  let v = f();
  while (!ok(v) && Date.now() < end) {
    await sleep(200);
    v = f();
  }
  return v;
}

type Level = 'npm' | 'sh' | 'cli';

/** The chain's processes by level: npm (its title), the `sh -c` npm runs, the CLI, the ranks. */
function levels(tag: string) {
  const all = processesTagged(tag);
  const of = (re: RegExp) => all.filter((p) => re.test(p.cmd));
  return {
    all,
    npm: of(/^npm /),
    sh: of(/^(\/bin\/)?sh -c /),
    cli: of(/bin\/relay-lab(\.mjs)? run/).filter((p) => !/^(\/bin\/)?sh -c /.test(p.cmd)),
    ranks: of(/out\/node\/rank\.mjs/),
  };
}

const LAUNCH: Record<string, string[]> = {
  npx: ['npx', 'relay-lab', ...RUN],
  'npm exec': ['npm', 'exec', '--', 'relay-lab', ...RUN],
  sh: ['sh', '-c', `node bin/relay-lab.mjs ${RUN.join(' ')}`],
};

const CASES: [launch: string, kill: Level][] = [
  ['npx', 'npm'],
  ['npx', 'sh'],
  ['npx', 'cli'],
  ['npm exec', 'npm'],
  ['sh', 'sh'],
];

describe('relay-lab dies whole when any level of what started it is killed', () => {
  it.each(CASES)(
    'started by %s, SIGKILL at the %s level: no process of the tree remains',
    async (launch, kill) => {
      const tag = `lifeline-${launch.replace(' ', '-')}-${kill}-${process.pid}-${Date.now()}`;
      const env: NodeJS.ProcessEnv = { ...process.env, [CHAOS_TAG_ENV]: tag };
      delete env.NODE_EXTRA_CA_CERTS;
      const [cmd, ...args] = LAUNCH[launch]!;
      const top = spawn(cmd!, args, { cwd: repoRoot, env, detached: true, stdio: 'ignore' });
      started.push(top);
      // The whole chain up: the launchers, the CLI and every rank.
      const up = await until(
        () => levels(tag),
        (l) => l.ranks.length === RANKS && l.cli.length === 1,
        120_000,
      );
      expect({ cli: up.cli.length, ranks: up.ranks.length }, JSON.stringify(up.all)).toEqual({
        cli: 1,
        ranks: RANKS,
      });
      const victim = up[kill][0];
      expect(victim, `no ${kill} level in ${JSON.stringify(up.all)}`).toBeDefined();
      process.kill(victim!.pid, 'SIGKILL');
      const left = await until(
        () => processesTagged(tag),
        (l) => l.length === 0,
        20_000,
      );
      expect(left).toEqual([]);
    },
    180_000,
  );
});
