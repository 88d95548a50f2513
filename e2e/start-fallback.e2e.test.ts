// `npm start` where Electron cannot run: one clear line, then browser mode
// with its URL on a line of its own. (Where Electron is installed the
// fallback does not happen, and this test says so and skips.)
import { describe, it, expect } from 'vitest';
import { spawn } from 'node:child_process';
import http from 'node:http';
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
