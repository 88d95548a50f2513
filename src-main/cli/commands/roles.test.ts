// The standalone roles as separate OS processes: a controller, a relay and
// two ranks find each other through flags only (CLI.md 3), as they would
// across machines.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const bin = path.join(root, 'bin', 'relay-lab.mjs');
const SALT = '0123456789abcdef0123456789abcdef';
const children: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

function role(args: string[]) {
  const child = spawn(process.execPath, [bin, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  const lineWaiters: [RegExp, (m: RegExpMatchArray) => void][] = [];
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => {
    err += d;
    for (const [re, res] of lineWaiters) {
      const m = err.match(re);
      if (m) res(m);
    }
  });
  return {
    waitFor: (re: RegExp) => new Promise<RegExpMatchArray>((r) => lineWaiters.push([re, r])),
    done: new Promise<{ code: number | null; out: string; err: string }>((r) =>
      child.on('close', (code) => r({ code, out, err })),
    ),
  };
}

describe('standalone roles', () => {
  it('controller + relay + two ranks reduce two rounds and every verdict is ok', async () => {
    const controller = role(['controller', '--port', '0', '--world-size', '2', '--salt', SALT, '--json']);
    const port = (await controller.waitFor(/listening on 127\.0\.0\.1:(\d+)/))[1];
    const relay = role([
      'relay',
      '--host',
      'h0',
      '--controller',
      `127.0.0.1:${port}`,
      '--ranks',
      '0,1',
      '--world-size',
      '2',
      '--salt',
      SALT,
      '--data-port',
      '0',
      '--control-port',
      '0',
    ]);
    const m = await relay.waitFor(/data 127\.0\.0\.1:(\d+) control 127\.0\.0\.1:(\d+)/);
    const rank = (r: number) =>
      role([
        'rank',
        '--rank',
        String(r),
        '--world-size',
        '2',
        '--salt',
        SALT,
        '--data-port',
        m[1],
        '--control-port',
        m[2],
        '--rounds',
        '2',
        '--model-bytes',
        '1KiB',
        '--json',
      ]);
    const ranks = [rank(0), rank(1)];
    for (const r of ranks) {
      const { code, out, err } = await r.done;
      expect(code, err).toBe(0);
      const rep = JSON.parse(out);
      expect(rep.verdict).toBe('ok');
      expect(rep.rounds.map((x: { verdict: string }) => x.verdict)).toEqual(['ok', 'ok']);
    }
    expect((await relay.done).code).toBe(0);
    const c = await controller.done;
    expect(c.code, c.err).toBe(0);
    const rep = JSON.parse(c.out);
    expect(rep).toMatchObject({ role: 'controller', roundsCompleted: 2, verdict: 'ok' });
    expect(rep.links.map((l: { id: string }) => l.id).sort()).toEqual([
      'h0.uplink.control',
      'h0.uplink.data',
    ]);
  });

  it('a rank with an out-of-range id is refused locally with the flodl message (5.5 #4, #5)', async () => {
    const a = await role([
      'rank',
      '--rank',
      '5',
      '--world-size',
      '3',
      '--salt',
      SALT,
      '--data-port',
      '1',
      '--control-port',
      '2',
    ]).done;
    expect(a.code).toBe(2);
    expect(a.err).toMatch(/rank_id 5 must be < world_size 3/);
    const b = await role([
      'rank',
      '--rank',
      '0',
      '--world-size',
      '0',
      '--salt',
      SALT,
      '--data-port',
      '1',
      '--control-port',
      '2',
    ]).done;
    expect(b.code).toBe(2);
    expect(b.err).toMatch(/--world-size: 0 is outside 1 to 65536/);
  });

  it('huge sizes are usage errors, not an allocation failure or a hang (exit 2)', async () => {
    const c = await role(['controller', '--port', '0', '--world-size', '9999999999999', '--salt', SALT]).done;
    expect(c.code).toBe(2);
    expect(c.err).toMatch(/--world-size: 9999999999999 is outside 1 to 65536/);
    const r = await role([
      'rank',
      '--rank',
      '0',
      '--world-size',
      '1',
      '--salt',
      SALT,
      '--model-bytes',
      '100GiB',
      '--data-port',
      '1',
      '--control-port',
      '2',
    ]).done;
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--model-bytes: 100GiB is outside 4 B to 512 MiB/);
  });

  it('a controller whose port is taken says so by name and exits 1, no stack trace', async () => {
    const first = role(['controller', '--port', '0', '--world-size', '1', '--salt', SALT]);
    const port = (await first.waitFor(/listening on 127\.0\.0\.1:(\d+)/))[1];
    const second = await role(['controller', '--port', port, '--world-size', '1', '--salt', SALT]).done;
    expect(second.code).toBe(1);
    expect(second.err).toMatch(new RegExp(`EADDRINUSE: cannot listen on 127\\.0\\.0\\.1:${port}`));
    expect(second.err).not.toMatch(/\n\s+at /);
  });
});
