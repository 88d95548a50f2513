// The window at the sizes people use (1024x700 and 1440x900), driven in
// Debian's Chromium against `npm start -- --browser --no-open`: no sideways
// page scroll, the toolbar's overflow menu, a list that keeps the selection
// while units stream in (until Esc) and shows a filter's first rows at once, the
// session's counters after a reload, rounds on every round unit, and no
// stall finding in a healthy default session. The long functional suite
// (browser-mode.e2e.test.ts) runs at 1440x900; these layout-sensitive tests
// run at both sizes.
import { describe, it, expect } from 'vitest';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { useAppPerViewport, VIEWPORTS } from './app-per-viewport';
import { browserOrSkip, resultsDir, rankChip } from './support';

const exe = browserOrSkip('layout e2e');
const WAIT = { timeout: 120_000 };

describe.skipIf(!exe)('the window at 1024x700 and 1440x900', { timeout: 240_000 }, () => {
  const { pages } = useAppPerViewport(exe);

  const rowsOf = (page: Page) => page.getByRole('region', { name: 'Records' }).getByRole('row');

  for (const [i, vp] of VIEWPORTS.entries()) {
    const at = `${vp.width}x${vp.height}`;

    it(`${at}: no sideways page scroll, a one-line toolbar, every control reachable`, async () => {
      const page = pages[i];
      await expect.poll(() => rowsOf(page).count(), WAIT).toBeGreaterThan(5);
      const size = await page.locator('html').evaluate((html) => {
        const q = (sel: string) => html.ownerDocument.querySelector(sel)!.getBoundingClientRect();
        return {
          scroll: html.scrollWidth,
          client: html.clientWidth,
          toolbar: q('.toolbar').height,
          list: q('.rec-scroll').width,
        };
      });
      expect(size.scroll).toBeLessThanOrEqual(size.client);
      // One line of controls (a wrapped toolbar is about twice as tall).
      expect(size.toolbar).toBeLessThan(48);
      // The list keeps a usable width between the side columns.
      expect(size.list).toBeGreaterThan(360);
      // Save trace is inline on a wide window (1360 px and up), in "More" on a narrower one; panes, theme and
      // shortcuts are always in "More".
      const more = page.getByRole('button', { name: 'More ▾' });
      if (vp.width < 1360 /* Toolbar.tsx TOOLBAR_INLINE_MIN_PX */) {
        // The page repaints every frame while units stream in: click as a person would, without
        // waiting for two identical frames (which a loaded machine may never give).
        await more.click({ force: true });
        await expect
          .poll(() => page.getByRole('menu', { name: 'More controls' }).getByRole('button').count())
          .toBeGreaterThanOrEqual(5);
        await page.keyboard.press('Escape');
        await expect.poll(() => page.getByRole('menu').count()).toBe(0);
      } else {
        expect(await page.getByRole('button', { name: 'Save trace' }).isVisible()).toBe(true);
        // Nothing in the toolbar is cut off at the window's edge.
        const edge = await more.evaluate((el) => el.getBoundingClientRect().right);
        expect(edge).toBeLessThanOrEqual(vp.width);
      }
      await page.screenshot({ path: path.join(resultsDir, `layout-${at}.png`) });
    });

    it(`${at}: the byte-savings plot is readable and fills its pane`, async () => {
      const page = pages[i];
      const plot = page.locator('.savings-body .chart .u-over');
      await plot.waitFor(WAIT);
      const plotPx = async () => (await plot.boundingBox())!.height;
      // Readable (byte-axis.ts MIN_CHART_PX less the round axis) however small the pane, where it was 15-40 px.
      expect(await plotPx()).toBeGreaterThanOrEqual(130);
      // A tall window and a taller bottom pane (Shift+ArrowUp on its splitter: 64 px a press).
      await page.setViewportSize({ width: vp.width, height: 1500 });
      const splitter = page.getByRole('separator', { name: 'Resize bottom panels' });
      await splitter.focus();
      for (let k = 0; k < 6; k++) await page.keyboard.press('Shift+ArrowUp');
      const fit = () =>
        page.locator('.savings-body').evaluate((body) => {
          const box = body.querySelector('.chart')!;
          const drawn = box.querySelector('.uplot')!.getBoundingClientRect();
          return {
            // Room left unused below the chart, and the box's height the plot and its legend leave empty.
            unused: body.clientHeight - body.scrollHeight,
            empty: box.clientHeight - drawn.height,
          };
        });
      // The chart takes the room the table leaves (nothing empty under it), and uPlot fills the box.
      await expect.poll(async () => (await fit()).unused, WAIT).toBeLessThanOrEqual(1);
      await expect.poll(async () => Math.abs((await fit()).empty), WAIT).toBeLessThanOrEqual(6);
      // Still readable. Not compared with the first height: the live table above it gains rows and
      // wrapped lines as rounds are measured, which can take more of the pane than the splitter gave.
      expect(await plotPx()).toBeGreaterThanOrEqual(130);
      for (let k = 0; k < 6; k++) await page.keyboard.press('Shift+ArrowDown');
      await page.setViewportSize(vp);
    });

    it(`${at}: a row selected while units stream in stays selected; Jump to latest follows again`, async () => {
      const page = pages[i];
      const rows = rowsOf(page);
      await expect.poll(() => rows.count(), WAIT).toBeGreaterThan(5);
      // Click the third visible row as a person would while the list moves under the pointer.
      const list = page.getByRole('grid', { name: 'Record list' });
      const box = (await list.boundingBox())!;
      await page.mouse.click(box.x + box.width / 2, box.y + 22 * 2.5);
      const selected = page.locator('[role="row"][aria-selected="true"]');
      await expect.poll(() => selected.count(), WAIT).toBe(1);
      const seq = await selected.getAttribute('data-seq');
      const jump = page.getByRole('button', { name: 'Jump to latest ↓' });
      await expect.poll(() => jump.count()).toBe(1);
      // Units keep streaming for a couple of seconds: the selected row stays in view.
      const newest = async () => Number(await rows.last().getAttribute('data-seq'));
      const before = await newest();
      await page.waitForTimeout(2000);
      expect(await selected.getAttribute('data-seq')).toBe(seq);
      expect(await selected.isVisible()).toBe(true);
      // Esc that closes a popup leaves the row selected; the next Esc unselects it and empties the inspector.
      const inspector = page.getByRole('region', { name: 'Inspector' });
      await expect.poll(() => inspector.getByRole('tree', { name: 'Fields' }).count(), WAIT).toBe(1);
      await page.getByRole('button', { name: 'Columns ▾' }).click({ force: true });
      await expect.poll(() => page.getByRole('group', { name: 'Columns shown' }).count()).toBe(1);
      await page.keyboard.press('Escape');
      await expect.poll(() => page.getByRole('group', { name: 'Columns shown' }).count()).toBe(0);
      expect(await selected.getAttribute('data-seq')).toBe(seq);
      await page.keyboard.press('Escape');
      await expect.poll(() => selected.count()).toBe(0);
      expect(await inspector.textContent()).toContain('Select a record to inspect');
      await jump.click();
      await expect.poll(newest, WAIT).toBeGreaterThan(before);
      await expect.poll(() => jump.count()).toBe(0);
    });
  }

  it('a filter change after scrolling far down shows its first rows at once (1024x700)', async () => {
    const page = pages[0];
    const list = page.getByRole('grid', { name: 'Record list' });
    // Park the view deep in a long list, as after Back to live and a ladder click.
    await list.evaluate((el) => (el.scrollTop = el.scrollHeight / 2));
    const filter = page.getByRole('textbox', { name: 'Filter' });
    await filter.fill('kind == RoundFrame && round > 0');
    const visible = () =>
      list.evaluate((el) => {
        const box = el.getBoundingClientRect();
        return [...el.querySelectorAll('[role="row"]')].filter((r) => {
          const b = r.getBoundingClientRect();
          return b.bottom > box.top && b.top < box.bottom;
        }).length;
      });
    // RoundFrames carry their round: the filter finds rows, and they are on screen.
    await expect.poll(visible, WAIT).toBeGreaterThan(3);
    const kinds = await rowsOf(page).evaluateAll((els) => [
      ...new Set(els.map((e) => e.getAttribute('data-kind'))),
    ]);
    expect(kinds).toEqual(['RoundFrame']);
    await filter.fill('');
  });

  it("counts are the session's after a reload (1440x900)", async () => {
    const page = pages[1];
    await page.reload();
    const rows = rowsOf(page);
    await expect.poll(() => rows.count(), WAIT).toBeGreaterThan(5);
    // Both read in one synchronous look at the page: units keep streaming in between two reads.
    const { seen, newest } = await page.locator('body').evaluate((body) => {
      const counter = body.querySelector('[aria-label="Record counts"] [data-session-seen]');
      const seqs = [...body.querySelectorAll('[role="row"][data-seq]')].map((r) =>
        Number(r.getAttribute('data-seq')),
      );
      return { seen: Number(counter?.getAttribute('data-session-seen')), newest: Math.max(...seqs) };
    });
    // The session numbered every unit from 0: it has seen at least the newest seq + 1.
    expect(seen).toBeGreaterThanOrEqual(newest + 1);
  });

  it('a healthy default session shows no stall finding and loses no rank', async () => {
    const page = pages[1];
    const findings = page.getByRole('region', { name: 'Findings' });
    const stalls = await findings
      .locator('li, [role="listitem"], .finding')
      .filter({ hasText: 'stalled' })
      .allTextContents();
    expect(stalls).toEqual([]);
    for (let r = 0; r < 8; r++)
      expect(await page.getByRole('button', { name: rankChip(r) }).getAttribute('data-state')).toBe('alive');
  });
});
