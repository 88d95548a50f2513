import { describe, it, expect } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openInAppMode, findChromium } from './open-browser';

describe('opening the lab in a local browser', () => {
  it('runs the browser found (RELAY_LAB_BROWSER first) in app mode on the URL, detached', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-open-'));
    const argsFile = path.join(dir, 'args.txt');
    const fake = path.join(dir, 'fake-browser.sh');
    fs.writeFileSync(fake, `#!/bin/sh\nprintf '%s\\n' "$@" > '${argsFile}'\n`, { mode: 0o755 });
    const saved = process.env.RELAY_LAB_BROWSER;
    process.env.RELAY_LAB_BROWSER = fake;
    try {
      expect(findChromium()).toBe(fake);
      const url = 'http://127.0.0.1:4321/?token=abc';
      expect(openInAppMode(url)).toBe(fake);
      await expect
        .poll(() => fs.existsSync(argsFile) && fs.readFileSync(argsFile, 'utf8').length > 0, {
          timeout: 10_000,
        })
        .toBe(true);
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
    } finally {
      if (saved === undefined) delete process.env.RELAY_LAB_BROWSER;
      else process.env.RELAY_LAB_BROWSER = saved;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
