// A topology whose host h0 relay is a command (an external relay under
// flodl's launch contract: here Relay Lab's own `relay --from-env`), started
// from the window's New topology form in browser mode: the window shows its
// ranks, rounds and savings as it shows the lab's own relay's.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import path from 'node:path';
import type { Page } from 'playwright-core';
import {
  browserOrSkip,
  clickStart,
  openBrowserModeSession,
  resultsDir,
  root,
  type BrowserModeSession,
  rankChip,
} from './support';

const exe = browserOrSkip('external relay e2e');
const WAIT = { timeout: 120_000 };

describe.skipIf(!exe)('an external relay in the window', { timeout: 300_000 }, () => {
  let session: BrowserModeSession | undefined;
  let page: Page;

  beforeAll(async () => {
    session = await openBrowserModeSession(exe!, { viewport: { width: 1440, height: 900 } });
    ({ page } = session);
  }, 300_000);

  afterAll(async () => {
    await session?.close();
  }, 30_000);

  it("shows an external relay's host, ranks, rounds and savings as the lab's own", async () => {
    await page.getByText('New topology (used by Start)').click();
    await page.getByLabel('Hosts').fill('2');
    await page.getByLabel('Ranks per host').fill('2');
    await page.getByLabel('Model (MiB)').fill('0.25');
    await page.locator('[data-field="relay-0"]').selectOption('command');
    await page
      .getByLabel('h0 relay command')
      .fill(`node ${path.join(root, 'bin', 'relay-lab.mjs')} relay --from-env`);
    await clickStart(page);
    const topology = page.getByRole('region', { name: 'Topology' });
    await expect.poll(() => topology.locator('[aria-label^="rank "]').count(), WAIT).toBe(4);
    for (let r = 0; r < 4; r++)
      await expect
        .poll(() => page.getByRole('button', { name: rankChip(r) }).getAttribute('data-state'), WAIT)
        .toBe('alive');
    // The savings of the external host: its relay folded both ranks' frames into one.
    await expect
      .poll(() => page.getByRole('row', { name: 'savings h0' }).getAttribute('data-k'), WAIT)
      .toBe('2');
    const rounds = async () =>
      Number(((await page.getByLabel('Rounds completed').textContent()) ?? '').replace(/\D/g, ''));
    await expect.poll(rounds, WAIT).toBeGreaterThan(3);
    // No mismatch finding: every round bit-exact behind the external relay.
    expect(await page.getByText(/is not flodl's bit for bit/).count()).toBe(0);
    // The choice is remembered with the form.
    const saved = await page.evaluate(() => localStorage.getItem('relay-lab.ui') ?? '');
    expect(saved).toContain('relay --from-env');
    await page.screenshot({ path: path.join(resultsDir, 'external-relay.png') });
  });
});
