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

function role(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FLODL_INTERNAL_RELAY_JSON: '', FLODL_RELAY_JSON: '', ...env },
  });
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
    // The coordinator read until the relay closed: both ranks' RankExit arrived after the reduce.
    expect(rep.rankExits).toEqual([0, 1]);
    // The control traffic a topology session drives: StartEpoch to each rank, SyncNow for each round.
    expect(rep.controlDown.StartEpoch).toBe(2);
    expect(rep.controlDown.SyncNow).toBeGreaterThanOrEqual(4);
    expect(rep.links.map((l: { id: string }) => l.id).sort()).toEqual([
      'h0.uplink.control',
      'h0.uplink.data',
    ]);
  });

  it('relay --from-env binds port+4/+5 and folds a 2x2 bf16 cluster', async () => {
    const controller = role(['controller', '--port', '0', '--world-size', '4', '--salt', SALT, '--json']);
    const port = Number((await controller.waitFor(/listening on 127\.0\.0\.1:(\d+)/))[1]);
    const spec = (host: string, ranks: number[]) =>
      Buffer.from(
        JSON.stringify({
          host,
          controller_host: '127.0.0.1',
          controller_port: port,
          ranks,
          salt_hex: SALT,
          world_size: 4,
          data_channel: true,
          frame_ceiling_bytes: 0,
        }),
      ).toString('hex');
    // h0 through flodl's contract; h1 on flags and free ports (two specs naming one controller port
    // would both bind its +4/+5: the reason the lab gives every external relay a port of its own).
    const r0 = role(['relay', '--from-env'], { FLODL_INTERNAL_RELAY_JSON: spec('h0', [0, 1]) });
    const m0 = await r0.waitFor(/relay h0 listening: data 127\.0\.0\.1:(\d+) control 127\.0\.0\.1:(\d+)/);
    expect([Number(m0[1]), Number(m0[2])]).toEqual([port + 4, port + 5]);
    const r1 = role(
      [
        'relay',
        '--host',
        'h1',
        '--controller',
        `127.0.0.1:${port}`,
        '--ranks',
        '2,3',
        '--world-size',
        '4',
      ].concat(['--salt', SALT, '--data-port', '0', '--control-port', '0']),
    );
    const m1 = await r1.waitFor(/data 127\.0\.0\.1:(\d+) control 127\.0\.0\.1:(\d+)/);
    const rank = (r: number, m: RegExpMatchArray) =>
      role(
        ['rank', '--rank', String(r), '--world-size', '4', '--salt', SALT, '--data-port', m[1]].concat([
          '--control-port',
          m[2],
          '--rounds',
          '3',
          '--model-bytes',
          '64KiB',
          '--dtype',
          'bf16',
          '--json',
        ]),
      );
    const ranks = [rank(0, m0), rank(1, m0), rank(2, m1), rank(3, m1)];
    for (const r of ranks) {
      const { code, out, err } = await r.done;
      expect(code, err).toBe(0);
      expect(JSON.parse(out).rounds.map((x: { verdict: string }) => x.verdict)).toEqual(['ok', 'ok', 'ok']);
    }
    expect((await r0.done).code).toBe(0);
    expect((await r1.done).code).toBe(0);
    expect((await controller.done).code).toBe(0);
  });

  it('bare relay reads the older variable name; bad specs are named errors', async () => {
    const hex = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('hex');
    const good = {
      host: 'hx',
      controller_host: '127.0.0.1',
      controller_port: 1,
      ranks: [0],
      salt_hex: SALT,
      world_size: 1,
      data_channel: true,
    };
    const bad = await role(['relay'], { FLODL_RELAY_JSON: hex({ ...good, ranks: [3] }) }).done;
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/RelaySpecError: BAD_RELAY_SPEC: FLODL_RELAY_JSON: field 'ranks'/);
    const notHex = await role(['relay', '--from-env'], { FLODL_INTERNAL_RELAY_JSON: 'xyz' }).done;
    expect(notHex.err).toMatch(/FLODL_INTERNAL_RELAY_JSON: not hex/);
    const none = await role(['relay', '--from-env']).done;
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/neither FLODL_INTERNAL_RELAY_JSON nor FLODL_RELAY_JSON is set/);
    const gpu = await role(['relay'], { FLODL_RELAY_JSON: hex({ ...good, data_channel: false }) }).done;
    expect(gpu.err).toMatch(/data_channel is false/);
    expect(bad.err + notHex.err + gpu.err).not.toMatch(/\n\s+at /);
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
