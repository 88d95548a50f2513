// A first visit at the smaller window size (1024x700), in Chromium: the one-line "start here" hint
// under the toolbar fits without sideways scroll, the Glossary shows a WIRE.md section rendered
// (a table, no raw Markdown) inside the drawer's width, and the hint once dismissed stays gone
// after a reload.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import { browserOrSkip, CHROMIUM_ARGS, launchBrowserMode, resultsDir, type LaunchedApp } from './support';

const exe = browserOrSkip('tour hint e2e');
const WAIT = { timeout: 120_000 };

describe.skipIf(!exe)('first visit at 1024x700', { timeout: 240_000 }, () => {
  let app: LaunchedApp;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    app = await launchBrowserMode(240_000);
    browser = await chromium.launch({ executablePath: exe!, headless: true, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1024, height: 700 } });
    page.setDefaultTimeout(120_000);
    await page.goto(app.url);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
  }, 30_000);

  it('points at the tour in one line, renders a spec section in the drawer, and forgets the hint once dismissed', async () => {
    const hint = page.getByRole('note', { name: 'Start here' });
    await expect.poll(() => hint.count(), WAIT).toBe(1);
    const fit = await page.locator('html').evaluate((html) => ({
      scroll: html.scrollWidth,
      client: html.clientWidth,
      hint: html.ownerDocument.querySelector('.tour-hint')!.getBoundingClientRect().height,
    }));
    expect(fit.scroll).toBeLessThanOrEqual(fit.client);
    expect(fit.hint).toBeLessThanOrEqual(30);

    // The Glossary is in "More" at this width; a term's WIRE.md 3.2 opens the section, rendered.
    await page.getByRole('button', { name: 'More ▾' }).click();
    await page.getByRole('menu', { name: 'More controls' }).getByRole('button', { name: 'Glossary' }).click();
    const glossary = page.getByRole('region', { name: 'Glossary' });
    await glossary.getByRole('button', { name: 'WIRE.md 3.2' }).first().click();
    const section = glossary.getByRole('region', { name: 'WIRE.md 3.2' });
    await expect.poll(() => section.locator('table').count(), WAIT).toBeGreaterThan(0);
    expect(await section.textContent()).not.toMatch(/\|---|\*\*|`/);
    // Opened from a term far down the list, the section shows from its heading.
    await expect
      .poll(() => section.locator('h3').evaluate((h) => h.getBoundingClientRect().top), WAIT)
      .toBeGreaterThanOrEqual(0);
    const top = await section.locator('h3').evaluate((h) => h.getBoundingClientRect().top);
    expect(top).toBeLessThan(700 / 2);
    const drawer = await glossary.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
    expect(drawer.scroll).toBeLessThanOrEqual(drawer.client + 1);
    fs.mkdirSync(resultsDir, { recursive: true });
    await page.screenshot({ path: path.join(resultsDir, 'tour-hint-1024x700.png') });
    await glossary.getByRole('button', { name: 'Close glossary' }).click();

    await hint.getByRole('button', { name: 'Dismiss the tour hint' }).click();
    await expect.poll(() => hint.count(), WAIT).toBe(0);
    await page.reload();
    await expect.poll(() => page.locator('.toolbar').count(), WAIT).toBe(1);
    expect(await page.getByRole('note', { name: 'Start here' }).count()).toBe(0);
  });
});
