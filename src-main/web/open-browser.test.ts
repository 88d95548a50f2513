import { describe, it, expect, afterEach } from 'vitest';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openInAppMode, findChromium, describeOpen } from './open-browser';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const withDisplay = { ...process.env, DISPLAY: ':0' };
const dirs: string[] = [];
const savedBrowser = process.env.RELAY_LAB_BROWSER;

/** A stand-in browser: a shell script that records its arguments, then runs `then`. */
function fakeBrowser(then: string): { exe: string; argsFile: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-open-'));
  dirs.push(dir);
  const argsFile = path.join(dir, 'args.txt');
  const exe = path.join(dir, 'fake-browser.sh');
  fs.writeFileSync(exe, `#!/bin/sh\nprintf '%s\\n' "$@" > '${argsFile}'\n${then}\n`, { mode: 0o755 });
  process.env.RELAY_LAB_BROWSER = exe;
  return { exe, argsFile };
}

afterEach(() => {
  if (savedBrowser === undefined) delete process.env.RELAY_LAB_BROWSER;
  else process.env.RELAY_LAB_BROWSER = savedBrowser;
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('opening the lab in a local browser', () => {
  it('runs the browser found (RELAY_LAB_BROWSER first) in app mode on the URL, token off the command line', async () => {
    const { exe, argsFile } = fakeBrowser('exit 0');
    expect(findChromium()).toBe(exe);
    const url = 'http://127.0.0.1:4321/?token=abc';
    // A browser that exits 0 at once handed the URL to a copy already running.
    expect(await openInAppMode(url, { env: withDisplay })).toEqual({ kind: 'handed-off', exe });
    const args = fs.readFileSync(argsFile, 'utf8').trim().split('\n');
    // The token stays off the command line (every local user can read it):
    // the browser starts on a page only this user can read, which goes on to the URL.
    expect(args.join(' ')).not.toContain('abc');
    const app = args.find((a) => a.startsWith('--app='))!.slice('--app='.length);
    const page = fileURLToPath(app);
    expect(fs.statSync(page).mode & 0o077).toBe(0);
    expect(fs.statSync(path.dirname(page)).mode & 0o077).toBe(0);
    expect(fs.readFileSync(page, 'utf8')).toContain(`content="0;url=${url}"`);
    expect(args.some((a) => a.startsWith('--user-data-dir='))).toBe(true);
  });

  it.runIf(process.platform === 'linux')(
    'starts no browser where there is no display, and says so',
    async () => {
      const { exe, argsFile } = fakeBrowser('exit 0');
      const env = { ...process.env };
      delete env.DISPLAY;
      delete env.WAYLAND_DISPLAY;
      const outcome = await openInAppMode('http://127.0.0.1:1/?token=t', { env });
      expect(outcome).toEqual({ kind: 'no-display', exe });
      expect(fs.existsSync(argsFile)).toBe(false);
      expect(describeOpen(outcome)).toMatch(/no window was opened: open the URL above/);
      expect(describeOpen(outcome)).not.toMatch(/Opened/);
    },
  );

  it('reports a browser that exits with an error as no window, with its reason', async () => {
    fakeBrowser(`echo '[1:1:ERROR:ozone_platform_x11.cc(240)] Missing X server or $DISPLAY' >&2\nexit 1`);
    const outcome = await openInAppMode('http://127.0.0.1:1/?token=t', { env: withDisplay });
    expect(outcome).toMatchObject({ kind: 'failed', detail: 'exit code 1: Missing X server or $DISPLAY' });
    expect(describeOpen(outcome)).toBe(
      'fake-browser.sh could not open a window (exit code 1: Missing X server or $DISPLAY): open the URL above in a browser.',
    );
  });

  it('calls the window open only once the browser has kept running', async () => {
    const { exe } = fakeBrowser('exec sleep 5');
    const outcome = await openInAppMode('http://127.0.0.1:1/?token=t', { env: withDisplay, settleMs: 500 });
    expect(outcome).toEqual({ kind: 'opened', exe });
    expect(describeOpen(outcome)).toBe('Opened in fake-browser.sh (app mode).');
  });

  it('names no window when no browser is found', () => {
    expect(describeOpen({ kind: 'no-browser' })).toMatch(/^No Chromium or Chrome found/);
  });

  const chromium = findChromium();
  it.runIf(chromium && process.platform === 'linux')(
    'says a real Chromium opened no window on a display that does not exist',
    async () => {
      const outcome = await openInAppMode('http://127.0.0.1:1/?token=t', {
        env: { ...process.env, DISPLAY: ':7391', WAYLAND_DISPLAY: '' },
      });
      expect(outcome.kind).toBe('failed');
      expect(describeOpen(outcome)).toMatch(/could not open a window \(exit code \d+: .+\)/);
    },
  );

  it.runIf(process.platform === 'linux')(
    'browser mode with no display prints the URL and that no window opened, never "Opened in"',
    async () => {
      const renderer = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-open-renderer-'));
      dirs.push(renderer);
      fs.writeFileSync(path.join(renderer, 'index.html'), '<!doctype html>');
      fakeBrowser('exec sleep 5');
      const env: NodeJS.ProcessEnv = { ...process.env };
      delete env.DISPLAY;
      delete env.WAYLAND_DISPLAY;
      delete env.NODE_EXTRA_CA_CERTS;
      const traces = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-open-traces-'));
      dirs.push(traces);
      const child = spawn(
        process.execPath,
        [path.join(root, 'out/node/web.mjs'), '--idle', '--renderer', renderer, '--traces-dir', traces],
        { env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      try {
        await expect.poll(() => out, { timeout: 30_000 }).toContain('Press Ctrl+C to stop the lab.');
        expect(out).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=\S+$/m);
        expect(out).toContain('No display here');
        expect(out).not.toContain('Opened in');
      } finally {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
    },
    60_000,
  );
});
