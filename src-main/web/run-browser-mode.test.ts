import { describe, it, expect } from 'vitest';
import { parseBrowserModeArgs } from './run-browser-mode';

describe('browser mode options', () => {
  const defaults = { rendererDir: '/app/out/renderer' };
  it('opens the window and starts the default topology unless told otherwise', () => {
    expect(parseBrowserModeArgs([], defaults)).toEqual({
      open: true,
      autoStart: true,
      rendererDir: '/app/out/renderer',
    });
    expect(parseBrowserModeArgs(['--browser', '--no-open', '--idle', '--port', '4567'], defaults)).toEqual({
      open: false,
      autoStart: false,
      port: 4567,
      rendererDir: '/app/out/renderer',
    });
  });
  it('names a bad option or port', () => {
    expect(() => parseBrowserModeArgs(['--nope'], defaults)).toThrow("unknown option '--nope'");
    expect(() => parseBrowserModeArgs(['--port', 'x'], defaults)).toThrow(
      "--port takes a port number, not 'x'",
    );
    expect(() => parseBrowserModeArgs(['--port', '70000'], defaults)).toThrow('--port takes a port number');
  });
});
