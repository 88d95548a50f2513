// The Electron shell, end to end, with Playwright's Electron support. Runs
// where an Electron binary is installed; elsewhere it says so and skips.
import { describe, it, expect, beforeAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import fs from 'node:fs';
import { _electron as electron } from 'playwright-core';
import { electronBinary, root, resultsDir } from './support';

const exe = electronBinary();
if (!exe)
  console.warn(
    '\n*** electron e2e: no Electron binary installed (optional dependency); skipping the Electron tests ***\n',
  );

describe.skipIf(!exe)('Electron shell, end to end', () => {
  beforeAll(() => {
    const built = spawnSync(process.execPath, ['scripts/start.mjs', '--build-only'], {
      cwd: root,
      stdio: 'inherit',
    });
    expect(built.status).toBe(0);
  }, 240_000);

  it('opens the lab window with the default topology, denies new windows and navigation', async () => {
    const env = { ...process.env } as Record<string, string>;
    delete env.NODE_EXTRA_CA_CERTS;
    delete env.ELECTRON_RUN_AS_NODE;
    const app = await electron.launch({
      executablePath: exe!,
      args: [path.join(root, 'out/main/index.js')],
      env,
    });
    try {
      const page = await app.firstWindow();
      // Served from the privileged app:// scheme, never file://.
      expect(page.url()).toBe('app://relay-lab/index.html');
      await expect.poll(() => page.locator('[aria-label^="rank "]').count(), { timeout: 60_000 }).toBe(8);
      const prefs = await app.evaluate(({ BrowserWindow }) =>
        BrowserWindow.getAllWindows()[0].webContents.getLastWebPreferences(),
      );
      expect(prefs).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false });
      // No Node in the page, only the narrow bridge.
      expect(await page.evaluate(() => typeof (globalThis as { require?: unknown }).require)).toBe(
        'undefined',
      );
      expect(
        await page.evaluate(() =>
          Object.keys((globalThis as unknown as { relayLab: object }).relayLab).sort(),
        ),
      ).toEqual(['command', 'subscribe']);
      await page.evaluate(() =>
        (globalThis as unknown as { open(u: string): unknown }).open('https://example.com'),
      );
      const urlBefore = page.url();
      await page
        .evaluate(
          () =>
            ((globalThis as unknown as { location: { href: string } }).location.href = 'https://example.com'),
        )
        .catch(() => {});
      expect(app.windows().length).toBe(1);
      expect(page.url()).toBe(urlBefore);
      fs.mkdirSync(resultsDir, { recursive: true });
      await page.screenshot({ path: path.join(resultsDir, 'electron-window.png') });
    } finally {
      await app.close();
    }
  }, 120_000);
});
