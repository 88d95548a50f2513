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
    });
    expect(parseBrowserModeArgs(['--browser', '--no-open', '--idle', '--port', '4567'], defaults)).toEqual({
      open: false,
      autoStart: false,
      port: 4567,
      rendererDir: '/app/out/renderer',
      tracesDir: path.join(os.homedir(), 'relay-lab-traces'),
    });
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
  it('names a bad option or port', () => {
    expect(() => parseBrowserModeArgs(['--nope'], defaults)).toThrow("unknown option '--nope'");
    expect(() => parseBrowserModeArgs(['--port', 'x'], defaults)).toThrow(
      "--port takes a port number, not 'x'",
    );
    expect(() => parseBrowserModeArgs(['--port', '70000'], defaults)).toThrow('--port takes a port number');
  });
});
