// What the window shows is so, at 1024x700 and 1440x900, in Debian's Chromium
// against `npm start -- --browser --no-open`: the toolbar keeps every control
// on screen while recording; the ladder's every lane is reachable and it
// follows the tour's unit; Jump to latest works on a paused display; every
// dialog takes the focus, keeps Tab, closes on Escape and gives the focus
// back; the tour gives back the display it paused; Compare modes' results
// are visible; a clean Stop draws stopped ranks and relays, not dead ones,
// while a rank killed before it stays dead.
import { describe, it, expect } from 'vitest';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { useAppPerViewport, VIEWPORTS } from './app-per-viewport';
import { browserOrSkip, resultsDir, rankChip } from './support';

const exe = browserOrSkip('window truth e2e');
const WAIT = { timeout: 120_000 };

/** What has the focus: its accessible name or text, and whether it is inside a modal dialog. */
function focusOf(page: Page) {
  return page.locator('body').evaluate((body) => {
    const a = body.ownerDocument.activeElement;
    return {
      name: (a?.getAttribute('aria-label') ?? a?.textContent ?? '').trim().slice(0, 40),
      dialog: a?.closest('[aria-modal="true"]')?.getAttribute('aria-label') ?? null,
      region: a?.closest('[role="region"]')?.getAttribute('aria-label') ?? null,
    };
  });
}

/** A toolbar button, on the line or in "More" (where the run state needs the room, e.g. at 1440 wide). */
async function clickToolbar(page: Page, name: string): Promise<void> {
  const button = page.getByRole('button', { name, exact: true });
  if (!(await button.isVisible())) await page.getByRole('button', { name: 'More ▾' }).click({ force: true });
  await button.click({ force: true });
}

describe.skipIf(!exe)('the window says what is so', { timeout: 300_000 }, () => {
  const { pages } = useAppPerViewport(exe);

  const rowsOf = (page: Page) => page.getByRole('region', { name: 'Records' }).getByRole('row');

  for (const [i, vp] of VIEWPORTS.entries()) {
    const at = `${vp.width}x${vp.height}`;

    it(`${at}: the run state and the rounds count are on the toolbar, whole`, async () => {
      const page = pages[i];
      await expect.poll(() => rowsOf(page).count(), WAIT).toBeGreaterThan(5);
      // Each part of the status shows all of its text (the status shrank to 9 px at 1440x900 while
      // every teaching and trace control stayed inline: no run state, no rounds count on screen).
      const cut = () =>
        page
          .locator('.toolbar .status')
          .evaluate((status) =>
            [...status.children]
              .filter((c) => c.scrollWidth > c.clientWidth + 1 || c.getBoundingClientRect().width < 1)
              .map((c) => c.textContent),
          );
      await expect.poll(cut, WAIT).toEqual([]);
      expect(await page.getByLabel('Rounds completed').innerText()).toMatch(/^[\d,]+ rounds done$/);
    });

    it(`${at}: recording never pushes a control off the toolbar`, async () => {
      const page = pages[i];
      await expect.poll(() => rowsOf(page).count(), WAIT).toBeGreaterThan(5);
      const more = page.getByRole('button', { name: 'More ▾' });
      const fit = () =>
        page.locator('.toolbar').evaluate((bar) => ({
          overflow: bar.scrollWidth - bar.clientWidth,
          more: bar.querySelector('.overflow-menu')!.getBoundingClientRect().right,
        }));
      const record = page.getByRole('button', { name: 'Record', exact: true });
      // Record is inline on a wide window, in "More" on a narrow one.
      if (!(await record.isVisible())) await more.click({ force: true });
      await record.click({ force: true });
      const recording = page.getByRole('button', { name: /^● Recording \(\d+\)$/ });
      if (!(await recording.isVisible())) await more.click({ force: true });
      await recording.waitFor(WAIT);
      await expect.poll(async () => (await fit()).overflow, WAIT).toBeLessThanOrEqual(0);
      expect((await fit()).more).toBeLessThanOrEqual(vp.width);
      await page.screenshot({ path: path.join(resultsDir, `truth-recording-${at}.png`) });
      // Stop recording: the draft opens in Reproductions; Escape closes it.
      await recording.click({ force: true });
      const dialog = page.getByRole('dialog', { name: 'Reproductions' });
      await dialog.waitFor(WAIT);
      await page.keyboard.press('Escape');
      await expect.poll(() => dialog.count(), WAIT).toBe(0);
      await page.keyboard.press('Escape');
    });

    it(`${at}: every lane of the ladder is on screen or reachable, and all of them at 1440`, async () => {
      const page = pages[i];
      const body = page.locator('.ladder-body');
      await body.locator('svg').waitFor(WAIT);
      const m = await body.evaluate((el) => {
        const names = [...el.querySelectorAll('.lane-name')];
        const ctl = names.find((n) => n.textContent === 'ctl')!.getBoundingClientRect();
        const box = el.getBoundingClientRect();
        return {
          lanes: names.length,
          ctlRight: ctl.right,
          bodyRight: box.left + el.clientWidth,
          scrollable:
            el.scrollWidth > el.clientWidth &&
            el.ownerDocument.defaultView!.getComputedStyle(el).overflowX !== 'hidden',
        };
      });
      // 8 ranks, 2 relays and the controller.
      expect(m.lanes).toBe(11);
      if (vp.width >= 1440) expect(m.ctlRight).toBeLessThanOrEqual(m.bodyRight);
      else expect(m.ctlRight <= m.bodyRight || m.scrollable).toBe(true);
    });

    it(`${at}: Jump to latest on a paused display shows the newest units`, async () => {
      const page = pages[i];
      const rows = rowsOf(page);
      await expect.poll(() => rows.count(), WAIT).toBeGreaterThan(5);
      await page.getByRole('button', { name: 'Pause display' }).click();
      const newest = async () => Number(await rows.last().getAttribute('data-seq'));
      const before = await newest();
      // The session goes on while the display holds still.
      await expect
        .poll(
          async () => Number(await page.locator('[data-session-seen]').getAttribute('data-session-seen')),
          WAIT,
        )
        .toBeGreaterThan(before + 20);
      expect(await newest()).toBe(before);
      await page.getByRole('button', { name: 'Jump to latest ↓' }).click();
      await expect.poll(newest, WAIT).toBeGreaterThan(before + 20);
      // It follows the stream again (a Wireshark user's "Go to last packet" with auto-scroll).
      expect(await page.getByRole('button', { name: 'Pause display' }).count()).toBe(1);
    });

    it(`${at}: each dialog takes the focus, keeps Tab inside, closes on Escape and gives the focus back`, async () => {
      const page = pages[i];
      const more = page.getByRole('button', { name: 'More ▾' });
      const open = async (name: string) => {
        const button = page.getByRole('button', { name, exact: true });
        if (!(await button.isVisible())) await more.click({ force: true });
        await button.click({ force: true });
      };
      for (const [button, dialog] of [
        ['Reproductions', 'Reproductions'],
        ['Explore', 'Explore topologies'],
        ['Shortcuts', 'Keyboard shortcuts'],
      ] as const) {
        await open(button);
        await page.getByRole('dialog', { name: dialog }).waitFor(WAIT);
        await expect.poll(async () => (await focusOf(page)).dialog, WAIT).toBe(dialog);
        for (let k = 0; k < 25; k++) await page.keyboard.press('Tab');
        expect((await focusOf(page)).dialog, `${dialog}: Tab`).toBe(dialog);
        for (let k = 0; k < 5; k++) await page.keyboard.press('Shift+Tab');
        expect((await focusOf(page)).dialog, `${dialog}: Shift+Tab`).toBe(dialog);
        await page.keyboard.press('Escape');
        await expect.poll(() => page.getByRole('dialog').count(), WAIT).toBe(0);
        // Back on the button that opened it (or on "More", which held it on a narrow window).
        const back = (await focusOf(page)).name;
        expect([button, 'More ▾']).toContain(back);
      }
      // The glossary, a panel over the window: focus in, Escape closes it, focus back.
      await open('Glossary');
      await expect.poll(async () => (await focusOf(page)).region, WAIT).toBe('Glossary');
      await page.keyboard.press('Escape');
      await expect.poll(() => page.getByRole('region', { name: 'Glossary' }).count(), WAIT).toBe(0);
      expect(['Glossary', 'More ▾']).toContain((await focusOf(page)).name);
    });
  }

  it("1440x900: the ladder shows the tour step's round; leaving the tour gives back the display and the focus", async () => {
    const page = pages[1];
    await clickToolbar(page, 'Guided tour');
    const tour = page.getByRole('region', { name: 'Tour' });
    await expect.poll(() => tour.textContent(), WAIT).toMatch(/Step 1 of \d+/);
    await expect.poll(async () => (await focusOf(page)).region, WAIT).toBe('Tour');
    const round = /\(round (\d+)\)/.exec((await tour.textContent()) ?? '')![1];
    const ladderHead = page.getByRole('region', { name: 'Ladder' }).locator('header');
    await expect.poll(() => ladderHead.textContent(), WAIT).toContain(`round ${round} `);
    await expect.poll(() => page.getByRole('button', { name: 'Resume display' }).count(), WAIT).toBe(1);
    await page.screenshot({ path: path.join(resultsDir, 'truth-tour-1440x900.png') });
    await tour.getByRole('button', { name: 'Next' }).click();
    await tour.getByRole('button', { name: 'Next' }).click();
    await expect.poll(() => tour.textContent(), WAIT).toMatch(/Step 3 of/);
    await page.keyboard.press('Escape');
    await expect.poll(() => tour.count(), WAIT).toBe(0);
    // Back on the button that opened it (or on "More", which held it).
    expect(['Guided tour', 'More ▾']).toContain((await focusOf(page)).name);
    // The display the tour paused runs again.
    await expect.poll(() => page.getByRole('button', { name: 'Pause display' }).count(), WAIT).toBe(1);
    // Reopened, it starts at step 1 and offers the step it was left at.
    await clickToolbar(page, 'Guided tour');
    await expect.poll(() => tour.textContent(), WAIT).toMatch(/Step 1 of/);
    expect(await tour.getByRole('button', { name: 'Resume at step 3' }).count()).toBe(1);
    await tour.getByRole('button', { name: 'Leave tour' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Pause display' }).count(), WAIT).toBe(1);
  });

  it('1440x900: the tour sets a filter aside in plain sight and gives it back when left', async () => {
    const page = pages[1];
    const filter = page.getByRole('textbox', { name: 'Filter' });
    // A filter that hides the tour's first unit (a rank's RoundFrame).
    await filter.fill('kind == Broadcast');
    await clickToolbar(page, 'Guided tour');
    const tour = page.getByRole('region', { name: 'Tour' });
    await expect.poll(() => tour.textContent(), WAIT).toMatch(/Step 1 of/);
    const note = page.getByRole('status', { name: 'Filter set aside' });
    await note.waitFor(WAIT);
    const boxes = await page.getByRole('region', { name: 'Records' }).evaluate((panel) => {
      const r = (el: typeof panel | null) => el!.getBoundingClientRect();
      const columns = [...panel.querySelectorAll('button')].find((b) =>
        b.textContent?.startsWith('Columns'),
      )!;
      return {
        note: r(panel.querySelector('.filter-suspended')),
        columns: r(columns),
        panel: r(panel),
        noteClipped:
          panel.querySelector('.filter-suspended')!.scrollWidth >
          panel.querySelector('.filter-suspended')!.clientWidth,
      };
    });
    const apart =
      boxes.note.bottom <= boxes.columns.top ||
      boxes.note.top >= boxes.columns.bottom ||
      boxes.note.right <= boxes.columns.left ||
      boxes.note.left >= boxes.columns.right;
    expect(apart, 'the note and Columns do not overlap').toBe(true);
    expect(boxes.note.right).toBeLessThanOrEqual(boxes.panel.right);
    expect(boxes.noteClipped).toBe(false);
    expect(await note.getByRole('button', { name: 'Restore filter' }).isVisible()).toBe(true);
    await page.screenshot({ path: path.join(resultsDir, 'truth-filter-aside-1440x900.png') });
    await tour.getByRole('button', { name: 'Leave tour' }).click();
    await expect.poll(() => filter.inputValue(), WAIT).toBe('kind == Broadcast');
    await expect.poll(() => note.count(), WAIT).toBe(0);
    await filter.fill('');
  });

  it('1440x900: the inspector shows whole help lines, a tall field tree and the hex rows without sideways scrolling', async () => {
    const page = pages[1];
    const filter = page.getByRole('textbox', { name: 'Filter' });
    await filter.fill('mux.kind == HostFrame');
    const row = page.getByRole('region', { name: 'Records' }).locator('[role="row"][data-seq]').first();
    await row.waitFor(WAIT);
    await page.getByRole('button', { name: 'Pause display' }).click();
    await row.click();
    const inspector = page.getByRole('region', { name: 'Inspector' });
    await inspector.locator('[role="treeitem"][data-key="mux.auth_tag"]').click();
    await page.getByRole('region', { name: 'Field help' }).waitFor(WAIT);
    const m = await inspector.evaluate((el) => {
      const hex = el.querySelector('.hex')!;
      const tree = el.querySelector('.insp-tree')!;
      const help = el.querySelector('.field-help')!;
      const style = el.ownerDocument.defaultView!.getComputedStyle(help);
      const line = parseFloat(style.lineHeight);
      const inner = help.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
      const item = el.querySelector('[role="treeitem"]')!.getBoundingClientRect().height;
      return {
        hexOver: hex.scrollWidth - hex.clientWidth,
        treeRows: tree.clientHeight / item,
        helpLines: inner / line,
      };
    });
    expect(m.hexOver).toBeLessThanOrEqual(0);
    expect(m.treeRows).toBeGreaterThanOrEqual(7);
    // A whole number of lines is shown, to a pixel (the cut falls between lines, not through one).
    expect(Math.abs(m.helpLines - Math.round(m.helpLines)) * 17).toBeLessThanOrEqual(1.5);
    expect(Math.round(m.helpLines)).toBeGreaterThanOrEqual(4);
    await page.screenshot({ path: path.join(resultsDir, 'truth-inspector-1440x900.png') });
    await page.getByRole('button', { name: 'Resume display' }).click();
    await filter.fill('');
  });

  it('1024x700: the hex rows fit the inspector (a third of the window) without sideways scrolling', async () => {
    const page = pages[0];
    const filter = page.getByRole('textbox', { name: 'Filter' });
    await filter.fill('mux.kind == HostFrame');
    const row = page.getByRole('region', { name: 'Records' }).locator('[role="row"][data-seq]').first();
    await row.waitFor(WAIT);
    await page.getByRole('button', { name: 'Pause display' }).click();
    await row.click();
    const inspector = page.getByRole('region', { name: 'Inspector' });
    await inspector.locator('.hex-row').first().waitFor(WAIT);
    const m = await inspector.evaluate((el) => {
      const hex = el.querySelector('.hex')!;
      return { width: el.getBoundingClientRect().width, hexOver: hex.scrollWidth - hex.clientWidth };
    });
    // 33vw: the narrowest inspector a person gets without dragging its splitter.
    expect(m.width).toBeLessThanOrEqual(340);
    expect(m.hexOver).toBeLessThanOrEqual(0);
    await page.screenshot({ path: path.join(resultsDir, 'truth-inspector-1024x700.png') });
    await page.getByRole('button', { name: 'Resume display' }).click();
    await filter.fill('');
  });

  for (const [i, vp] of VIEWPORTS.entries()) {
    it(`${vp.width}x${vp.height}: Compare modes shows its results`, async () => {
      const page = pages[i];
      const compare = page.getByRole('button', { name: 'Compare modes' });
      // The other window's comparison may be running: the button is back once it is done.
      await expect.poll(() => compare.isEnabled(), WAIT).toBe(true);
      await compare.click();
      const table = page.getByRole('table', { name: 'Compare modes' });
      await table.waitFor({ state: 'attached', timeout: 240_000 });
      await page.getByRole('button', { name: 'Modes compared' }).click();
      const box = page.locator('.compare');
      await expect.poll(async () => (await box.boundingBox())?.height ?? 0, WAIT).toBeGreaterThan(60);
      // Its rows can be brought into view (the savings body scrolls) and are then seen.
      await table.scrollIntoViewIfNeeded();
      expect(await table.isVisible()).toBe(true);
      expect(((await table.boundingBox())?.height ?? 0) > 40).toBe(true);
      await page.screenshot({ path: path.join(resultsDir, `truth-compare-${vp.width}x${vp.height}.png`) });
    }, 400_000);
  }

  it('1440x900: a clean Stop draws stopped relays and exited ranks; a rank killed before it stays dead', async () => {
    const page = pages[1];
    await page.getByRole('button', { name: rankChip(1) }).click();
    await page.getByRole('button', { name: 'Kill rank' }).click();
    const state = (rank: number) =>
      page.getByRole('button', { name: rankChip(rank) }).getAttribute('data-state');
    await expect.poll(() => state(1), WAIT).toBe('dead');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    // Each rank's exit is shown as it is reported: until then a rank still running is alive.
    for (const r of [0, 2, 3, 4, 5, 6, 7])
      await expect.poll(() => state(r), { ...WAIT, message: `rank ${r}` }).toBe('exited');
    expect(await state(1)).toBe('dead');
    for (const h of ['h0', 'h1']) {
      const relay = page.getByRole('button', { name: `relay ${h}` });
      expect(await relay.getAttribute('class')).not.toMatch(/\bdead\b/);
      expect(await relay.textContent()).toMatch(/stopped/);
    }
    await page.screenshot({ path: path.join(resultsDir, 'truth-stopped-1440x900.png') });
  });
});
