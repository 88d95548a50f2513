// `relay-lab run --relay-cmd` through the real command line: Relay Lab's own
// relay under flodl's launch contract on every host ('*='), its output on the
// run's stderr prefixed with the host, its exit status in the report; and
// flag errors named before anything starts.
import { describe, expect, it } from 'vitest';
import { relayLab } from '../testing/relay-lab-cli';

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
