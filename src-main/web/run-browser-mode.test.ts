import { describe, it, expect } from 'vitest';
import os from 'node:os';
import path from 'node:path';
import { parseBrowserModeArgs } from './run-browser-mode';

describe('browser mode options', () => {
  const defaults = { rendererDir: '/app/out/renderer' };
  it('opens the window and starts the default topology unless told otherwise', () => {
    expect(parseBrowserModeArgs([], defaults)).toEqual({
      open: true,
      autoStart: true,
      rendererDir: '/app/out/renderer',
      tracesDir: path.join(os.homedir(), 'relay-lab-traces'),
      taps: [],
    });
    expect(parseBrowserModeArgs(['--browser', '--no-open', '--idle', '--port', '4567'], defaults)).toEqual({
      open: false,
      autoStart: false,
      port: 4567,
      rendererDir: '/app/out/renderer',
      tracesDir: path.join(os.homedir(), 'relay-lab-traces'),
      taps: [],
    });
  });
  it('attaches to a Slurm job at launch (--attach HOST:PORT --token T), with no topology of its own', () => {
    const token = 'abcdefghijklmnopqrstuvwx';
    expect(parseBrowserModeArgs(['--attach', '127.0.0.1:7450', '--token', token], defaults)).toMatchObject({
      attach: { address: '127.0.0.1:7450', token },
      autoStart: false,
    });
    expect(() => parseBrowserModeArgs(['--attach', '127.0.0.1:7450'], defaults)).toThrow(/go together/);
    expect(() => parseBrowserModeArgs(['--attach', 'nowhere', '--token', token], defaults)).toThrow(
      /HOST:PORT/,
    );
  });
  it('takes a traces folder and a trace to open at launch', () => {
    expect(
      parseBrowserModeArgs(['--traces-dir', '/tmp/t', '--trace', '/tmp/t/a.trace.ndjson'], defaults),
    ).toMatchObject({
      tracesDir: '/tmp/t',
      trace: '/tmp/t/a.trace.ndjson',
    });
    expect(() => parseBrowserModeArgs(['--trace'], defaults)).toThrow('--trace takes a value');
    expect(() => parseBrowserModeArgs(['--traces-dir', '--no-open'], defaults)).toThrow(
      '--traces-dir takes a value',
    );
  });
  it('takes live taps (--tap, repeated or comma-separated) with the --salt they share', () => {
    const salt = '00112233445566778899aabbccddeeff';
    expect(
      parseBrowserModeArgs(
        [
          '--tap',
          '7001=10.0.0.5:7000@h0.uplink,0.0.0.0:7002=ctl:7000',
          '--salt',
          salt,
          '--tap',
          '[::1]:7003=[::1]:7000',
        ],
        defaults,
      ).taps,
    ).toEqual([
      {
        listenHost: '127.0.0.1',
        listenPort: 7001,
        upstreamHost: '10.0.0.5',
        upstreamPort: 7000,
        saltHex: salt,
        name: 'h0.uplink',
      },
      { listenHost: '0.0.0.0', listenPort: 7002, upstreamHost: 'ctl', upstreamPort: 7000, saltHex: salt },
      { listenHost: '::1', listenPort: 7003, upstreamHost: '::1', upstreamPort: 7000, saltHex: salt },
    ]);
    expect(() => parseBrowserModeArgs(['--tap', '7001=h:7000'], defaults)).toThrow('--tap needs --salt');
    expect(() => parseBrowserModeArgs(['--tap', '7001', '--salt', salt], defaults)).toThrow(
      '--tap takes [ADDR:]PORT=HOST:PORT',
    );
    expect(() => parseBrowserModeArgs(['--tap', '7001=h:70000', '--salt', salt], defaults)).toThrow('port');
    expect(() => parseBrowserModeArgs(['--tap', '7001=h:7000', '--salt', 'abc'], defaults)).toThrow('salt');
    expect(() => parseBrowserModeArgs(['--tap', '7001=h:7000@bad name', '--salt', salt], defaults)).toThrow(
      'name',
    );
  });
  it('names a bad option or port', () => {
    expect(() => parseBrowserModeArgs(['--nope'], defaults)).toThrow("unknown option '--nope'");
    expect(() => parseBrowserModeArgs(['--port', 'x'], defaults)).toThrow(
      "--port takes a port number, not 'x'",
    );
    expect(() => parseBrowserModeArgs(['--port', '70000'], defaults)).toThrow('--port takes a port number');
  });
});
