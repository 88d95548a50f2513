// `npm start` where Electron cannot run: one clear line, then browser mode
// with its URL on a line of its own. (Where Electron is installed the
// fallback does not happen, and this test says so and skips.)
import { describe, it, expect } from 'vitest';
import { spawn } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs';
import { electronBinary, root } from './support';

const hasElectron = electronBinary() !== null;
if (hasElectron)
  console.warn(
    '\n*** start fallback e2e: an Electron binary is installed, so npm start does not fall back; skipping ***\n',
  );

function status(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', reject);
  });
}

describe.skipIf(hasElectron)('npm start without Electron', () => {
  it('says why in one line and serves browser mode at the printed URL', async () => {
    const env = { ...process.env };
    delete env.NODE_EXTRA_CA_CERTS;
    const child = spawn(process.execPath, ['scripts/start.mjs', '--no-open', '--idle'], {
      cwd: root,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout!.on('data', (c: Buffer) => {
          out += c.toString();
          const m = /^(http:\/\/127\.0\.0\.1:\d+\/\S*)$/m.exec(out);
          if (m) resolve(m[1]);
        });
        child.once('exit', (code) => reject(new Error(`start exited (${code}) without a URL:\n${out}`)));
      });
      const fallbackLines = out.split('\n').filter((l) => /starting browser mode instead/.test(l));
      expect(fallbackLines).toHaveLength(1);
      expect(fallbackLines[0]).toMatch(
        /^relay-lab: .*Electron.*not installed.*; starting browser mode instead\.$/,
      );
      expect(await status(url)).toBe(200);
      expect(await status(url.replace(/\?token=.*$/, ''))).toBe(403);
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
      await exited;
    }
  }, 240_000);
});

// With no display, `npm start` reports only what happened: which mode it
// runs, the URL, and that no window opened (never "Opened in …"). Runs with
// or without Electron: with it, the launch skips Electron and says why.
describe('npm start with no display', () => {
  it('says no window opened and why, and claims no window', async () => {
    const browser = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p));
    const env: NodeJS.ProcessEnv = { ...process.env, RELAY_LAB_BROWSER: browser ?? '/usr/bin/chromium' };
    delete env.NODE_EXTRA_CA_CERTS;
    delete env.DISPLAY;
    delete env.WAYLAND_DISPLAY;
    const child = spawn(process.execPath, ['scripts/start.mjs', '--idle'], {
      cwd: root,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (c: Buffer) => {
          out += c.toString();
          if (/Press Ctrl\+C to stop the lab\./.test(out)) resolve();
        });
        child.once('exit', (code) => reject(new Error(`start exited (${code}):\n${out}`)));
      });
      expect(out).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=\S+$/m);
      expect(out).toMatch(
        /^No display here \(DISPLAY and WAYLAND_DISPLAY are unset\), so no window was opened: open the URL above in a browser\.$/m,
      );
      expect(out).not.toMatch(/Opened in|Sent the URL/);
      // One line says which mode runs and why; with Electron installed it names the missing display.
      const why = out.split('\n').filter((l) => /starting browser mode instead/.test(l));
      expect(why).toHaveLength(1);
      if (hasElectron) expect(why[0]).toMatch(/no display/);
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
      await exited;
    }
  }, 240_000);
});
