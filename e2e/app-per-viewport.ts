// One app in browser mode, one Chromium and one page per window size, for a
// describe block that checks the same things at each size against the same
// session. Pages are dark and wait generously: the machine may be busy, and
// nothing here measures speed.
import fs from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, launchBrowserMode, resultsDir, type LaunchedApp } from './support';

export const VIEWPORTS = [
  { width: 1024, height: 700 },
  { width: 1440, height: 900 },
] as const;

/** Call inside the describe; `pages[i]` is VIEWPORTS[i]'s page once its beforeAll has run. */
export function useAppPerViewport(exe: string | null): { pages: Page[] } {
  const pages: Page[] = [];
  let app: LaunchedApp | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    fs.mkdirSync(resultsDir, { recursive: true });
    app = await launchBrowserMode(240_000);
    browser = await chromium.launch({ executablePath: exe!, headless: true, args: CHROMIUM_ARGS });
    for (const viewport of VIEWPORTS) {
      const page = await browser.newPage({ viewport, colorScheme: 'dark' });
      page.setDefaultTimeout(120_000);
      page.on('pageerror', (e) => console.error(`page error (${viewport.width}):`, e.message));
      await page.goto(app.url);
      pages.push(page);
    }
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await app?.stop();
  }, 30_000);
  return { pages };
}
