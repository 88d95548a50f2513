// `relay-lab run --relay-cmd` through the real command line: Relay Lab's own
// relay under flodl's launch contract on every host ('*='), its output on the
// run's stderr prefixed with the host, its exit status in the report; and
// flag errors named before anything starts.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { relayLab, repoRoot } from '../testing/relay-lab-cli';

const RELAY = 'node bin/relay-lab.mjs relay --from-env';

describe('relay-lab run --relay-cmd', () => {
  it("'*=COMMAND' runs every host's relay as the command: verdict ok, lines prefixed, exits in the report", async () => {
    const { code, out, err } = await relayLab(
      ['run', '--hosts', '2', '--ranks-per-host', '3', '--rounds', '3', '--model-bytes', '32KiB'].concat([
        '--relay-cmd',
        `*=${RELAY}`,
        '--json',
      ]),
    );
    expect(code, err).toBe(0);
    const report = JSON.parse(out);
    expect(report.verdict).toBe('ok');
    expect(report.externalRelays).toEqual([
      { host: 0, command: RELAY, exit: 'exit code 0', stopped: 'exited' },
      { host: 1, command: RELAY, exit: 'exit code 0', stopped: 'exited' },
    ]);
    expect(err).toMatch(/^\[h0 relay\] relay h0 listening/m);
    expect(err).toMatch(/^\[h1 relay\] relay h1: 3 rounds folded/m);
  });

  it("--pause-rank and --kill-host behind '*=' relays: the same rounds, dead ranks and digests as behind the lab's own", async () => {
    const flags = [
      'run',
      '--hosts',
      '2',
      '--ranks-per-host',
      '2',
      '--rounds',
      '5',
      '--model-bytes',
      '16KiB',
    ].concat([
      '--seed',
      '3',
      '--staleness-ms',
      '1000',
      '--pause-rank',
      '1@1',
      '--kill-host',
      '1@3',
      '--json',
    ]);
    const own = await relayLab(flags);
    const ext = await relayLab([...flags, '--relay-cmd', `*=${RELAY}`]);
    expect(own.code, own.err).toBe(0);
    expect(ext.code, ext.err).toBe(0);
    // [2, 2]: every fold sums at most two terms, so the consensus bytes are the same on every run.
    const outcome = (out: string) => {
      const r = JSON.parse(out);
      return {
        verdict: r.verdict,
        dead: r.dead,
        rounds: r.rounds.map((x: Record<string, unknown>) => [
          x.round,
          x.verdict,
          x.accepted,
          x.consensusSha256,
        ]),
      };
    };
    expect(outcome(own.out)).toMatchObject({ verdict: 'ok', dead: [1, 2, 3] });
    expect(outcome(ext.out)).toEqual(outcome(own.out));
    expect(JSON.parse(ext.out).externalRelays.map((x: { exit: string }) => x.exit)).toEqual([
      'exit code 0',
      'signal SIGKILL',
    ]);
  }, 60_000);

  it.each([
    [['--relay-cmd', 'h5=x'], /--relay-cmd: no host h5 in this topology/],
    [['--relay-cmd', 'nothing'], /--relay-cmd must look like HOST=COMMAND/],
    [['--relay-cmd', "h0='open"], /BAD_CONFIG \(--relay-cmd\).*unterminated single quote/],
    [['--relay-cmd', 'h0=relay | tee x'], /'\|' at character 7 is shell syntax/],
    [['--relay-cmd', 'h0=x', '--mode', 'forward'], /an external relay runs flodl's fold/],
  ])('%j is a usage error (exit 2)', async (flags, re) => {
    const { code, err } = await relayLab(['run', '--hosts', '2', ...flags]);
    expect(code).toBe(2);
    expect(err).toMatch(re);
  });
});

describe('reproduction files and external relays', () => {
  it("record each relay's command and program SHA-256; a replay with another executable says so before it runs", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-byof-'));
    const program = path.join(dir, 'my-relay');
    const script = `#!/bin/sh\nexec "${process.execPath}" "${path.join(repoRoot, 'bin', 'relay-lab.mjs')}" relay --from-env\n`;
    fs.writeFileSync(program, script, { mode: 0o755 });
    const file = path.join(dir, 'run.json');
    const run = await relayLab(
      ['run', '--hosts', '2', '--ranks-per-host', '2', '--rounds', '2', '--model-bytes', '16KiB'].concat([
        '--relay-cmd',
        `h1=${program}`,
        '--save-repro',
        file,
      ]),
    );
    expect(run.code, run.err).toBe(0);
    const repro = JSON.parse(fs.readFileSync(file, 'utf8'));
    const sha = createHash('sha256').update(script).digest('hex');
    expect(repro.topology.relays).toEqual([{ host: 1, command: program, sha256: sha }]);
    // Another build at the same path.
    fs.writeFileSync(program, `${script}# rebuilt\n`, { mode: 0o755 });
    const replay = await relayLab(['repro', file]);
    expect(replay.err).toMatch(
      new RegExp(
        `relay-lab repro: relay h1 \\(command '${program}'\\): a different executable: .* the file recorded ${sha}`,
      ),
    );
    // Said before it ran: the notice precedes the relay's own output.
    expect(replay.err.indexOf('a different executable')).toBeLessThan(replay.err.indexOf('[h1 relay]'));
    expect(replay.code, replay.err).toBe(0);
  });
});
