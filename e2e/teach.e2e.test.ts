// Teaching in place, in Chromium (browser mode): every field row of a
// HostFrame, a Broadcast, a Data record carrying a ControlFrame and a relay
// Control record has a non-empty description; the Field help line explains
// the selected field; a selected MAC shades what it covers; the Glossary
// opens from a term in the inspector and shows the cited WIRE.md section.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { browserOrSkip, openBrowserModeSession, resultsDir, type BrowserModeSession } from './support';

const exe = browserOrSkip('teach e2e');
const WAIT = { timeout: 120_000 };

describe.skipIf(!exe)('teaching in place, end to end', { timeout: 240_000 }, () => {
  let session: BrowserModeSession | undefined;
  let page: Page;

  beforeAll(async () => {
    session = await openBrowserModeSession(exe!, { viewport: { width: 1600, height: 1000 } });
    ({ page } = session);
  }, 300_000);

  afterAll(async () => {
    await session?.close();
  }, 30_000);

  async function resume() {
    const button = page.getByRole('button', { name: 'Resume display' });
    if (await button.count()) await button.click();
  }

  /** Filters the list with the dissector's names, selects the first match, and returns the inspector. */
  async function inspectFirst(filterText: string) {
    const filter = page.getByRole('textbox', { name: 'Filter' });
    await filter.fill(filterText);
    const row = page.getByRole('region', { name: 'Records' }).locator('[role="row"][data-seq]').first();
    await row.waitFor(WAIT);
    // Hold the display still so the row stays put while it is clicked.
    const pause = page.getByRole('button', { name: 'Pause display' });
    if (await pause.count()) await pause.click();
    await row.click();
    const inspector = page.getByRole('region', { name: 'Inspector' });
    await expect.poll(() => inspector.getByRole('treeitem').count(), WAIT).toBeGreaterThan(2);
    // Open every collapsed row the tree shows.
    for (let i = 0; i < 30; i++) {
      const closed = inspector.locator('[role="treeitem"][aria-expanded="false"] .twisty');
      if ((await closed.count()) === 0) break;
      await closed.first().click();
    }
    return inspector;
  }

  async function expectEveryRowDescribed(filterText: string, mustShow: string[]) {
    const inspector = await inspectFirst(filterText);
    const rows = await inspector.getByRole('treeitem').evaluateAll((els) =>
      els.map((e) => ({
        label: e.getAttribute('aria-label') ?? '',
        key: e.getAttribute('data-key') ?? '',
        description: e.getAttribute('aria-description') ?? '',
        title: e.getAttribute('title') ?? '',
      })),
    );
    expect(rows.length).toBeGreaterThan(2);
    for (const r of rows) {
      expect(r.description.length, `${filterText}: ${r.label} (${r.key})`).toBeGreaterThan(20);
      expect(r.title, r.label).toBe(r.description);
    }
    const keys = rows.map((r) => r.key);
    for (const k of mustShow) expect(keys, filterText).toContain(k);
    await resume();
    return inspector;
  }

  it('every field row of a HostFrame, Broadcast, Data(ControlFrame) and Control record is described', async () => {
    await expectEveryRowDescribed('mux.kind == HostFrame', [
      'mux.kind',
      'mux.auth_tag',
      'rf.weight',
      'rf.tensor',
    ]);
    await expectEveryRowDescribed('mux.kind == Broadcast', ['mux.kind', 'rf.weight']);
    await expectEveryRowDescribed('mux.kind == Data', ['mux.rank', 'cf.msg_kind', 'ctl.msg']);
    await expectEveryRowDescribed('mux.kind == Control', ['mux.kind', 'relay.msg']);
  });

  it('selecting auth_tag explains it, shades what it covers and opens the glossary from a term', async () => {
    const inspector = await inspectFirst('mux.kind == HostFrame');
    await inspector.locator('[role="treeitem"][data-key="mux.auth_tag"]').click();
    const help = page.getByRole('region', { name: 'Field help' });
    await expect.poll(() => help.textContent(), WAIT).toMatch(/mux\.auth_tag.*header bytes 0\.\.17/s);
    await expect.poll(() => help.textContent()).toMatch(/session salt [0-9a-f]{32}/);
    const bytes = inspector.getByRole('region', { name: 'Bytes' });
    await expect.poll(() => bytes.locator('.hb.hl2[data-offset="0"]').count()).toBe(1);
    await expect.poll(() => bytes.locator('.hb.hl2[data-offset="16"]').count()).toBe(1);
    await expect.poll(() => bytes.locator('.hb.hl[data-offset="17"]').count()).toBe(1);
    await fs.promises.mkdir(resultsDir, { recursive: true });
    await page.screenshot({ path: path.join(resultsDir, 'teach-01-auth-tag.png') });
    await help.getByRole('button', { name: 'Glossary: salt' }).click();
    const glossary = page.getByRole('region', { name: 'Glossary' });
    await expect.poll(() => glossary.locator('dt.current').textContent(), WAIT).toBe('salt');
    await help.getByRole('button', { name: 'WIRE.md 2.3' }).click();
    await expect
      .poll(() => glossary.getByRole('region', { name: 'WIRE.md 2.3' }).textContent(), WAIT)
      .toMatch(/What each MAC covers/);
    await page.screenshot({ path: path.join(resultsDir, 'teach-02-glossary.png') });
    await glossary.getByRole('button', { name: 'Close glossary' }).click();
    await resume();
  });

  it('"Apply as filter" on a field row filters the list by it', async () => {
    const inspector = await inspectFirst('mux.kind == Broadcast');
    await inspector.locator('[role="treeitem"][data-key="mux.kind"]').click();
    await page
      .getByRole('region', { name: 'Field help' })
      .getByRole('button', { name: 'Apply as filter' })
      .click();
    await expect
      .poll(() => page.getByRole('textbox', { name: 'Filter' }).inputValue())
      .toBe('mux.kind == Broadcast');
    await resume();
  });

  /** The tour's button: on the line, or in "More" where the run state needs the room (1600 wide). */
  const openTour = async () => {
    const inline = page.getByRole('toolbar').getByRole('button', { name: 'Guided tour' });
    if (!(await inline.isVisible())) await page.getByRole('button', { name: 'More ▾' }).click();
    await page.getByRole('button', { name: 'Guided tour' }).click();
  };

  it('walks the guided tour on the default topology, each step selecting a real record', async () => {
    await page.getByRole('textbox', { name: 'Filter' }).fill('');
    await openTour();
    const tour = page.getByRole('region', { name: 'Tour' });
    await expect.poll(() => tour.textContent(), WAIT).toMatch(/Step 1 of \d+/);
    const total = Number(/Step 1 of (\d+)/.exec((await tour.textContent()) ?? '')![1]);
    expect(total).toBeGreaterThanOrEqual(6);
    expect(total).toBeLessThanOrEqual(10);
    const inspector = page.getByRole('region', { name: 'Inspector' });
    for (let i = 1; i <= total; i++) {
      await expect.poll(() => tour.textContent(), WAIT).toMatch(new RegExp(`Step ${i} of ${total}`));
      const seq = /Record #(\d+)/.exec((await tour.textContent()) ?? '')![1];
      // The record exists: the inspector shows it and decodes its fields.
      await expect.poll(() => inspector.locator('header').textContent(), WAIT).toContain(`#${seq}`);
      await expect.poll(() => inspector.getByRole('treeitem').count(), WAIT).toBeGreaterThan(0);
      if (i === 3)
        await expect
          .poll(() => page.getByRole('region', { name: 'Field help' }).textContent(), WAIT)
          .toContain('mux.auth_tag');
      if (i < total) await tour.getByRole('button', { name: 'Next' }).click();
    }
    await page.screenshot({ path: path.join(resultsDir, 'teach-03-tour.png') });
    // Keyboard, leave; reopened, it starts at step 1 and offers the step it was left at.
    await tour.press('ArrowLeft');
    await expect.poll(() => tour.textContent()).toMatch(new RegExp(`Step ${total - 1} of`));
    await tour.getByRole('button', { name: 'Leave tour' }).click();
    await expect.poll(() => tour.count()).toBe(0);
    await openTour();
    await expect.poll(() => tour.textContent(), WAIT).toMatch(/Step 1 of/);
    await tour.getByRole('button', { name: `Resume at step ${total - 1}` }).click();
    await expect.poll(() => tour.textContent(), WAIT).toMatch(new RegExp(`Step ${total - 1} of`));
    await tour.getByRole('button', { name: 'Leave tour' }).click();
    await resume();
  });
});
