// The records list past reading, in Debian's Chromium: fed by the window
// bench's engine process (real units of a running topology replayed into its
// tap at a set rate), the following list draws its rows on a canvas; a click
// on the picture selects the row under it and gives the DOM rows back,
// Jump to latest draws the picture again, and pausing the display or a
// stream that stops gives the rows back. Nothing here measures speed.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ServerProcess } from '../src-main/lab/bench/ui/server-process';
import { browserOrSkip, CHROMIUM_ARGS, root } from './support';

const exe = browserOrSkip('records picture e2e');
const WAIT = { timeout: 60_000 };

describe.skipIf(!exe)('the records list as a picture', { timeout: 300_000 }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'bench-ui.mjs'), '--build-only'], {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    expect(built.status).toBe(0);
    const env = { ...process.env };
    delete env.NODE_EXTRA_CA_CERTS;
    const child = spawn(
      process.execPath,
      [path.join(root, 'out', 'node', 'ui-bench-server.mjs'), path.join(root, 'out', 'renderer')],
      { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    server = new ServerProcess(child);
    const url = await server.ready;
    await server.ask('start', {
      config: { ranksPerHost: [2, 2], modelBytes: 4096, rounds: 0, roundIntervalMs: 250 },
    });
    await server.ask('harvest', { units: 200 });
    browser = await chromium.launch({ executablePath: exe!, headless: true, args: CHROMIUM_ARGS });
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    page.setDefaultTimeout(60_000);
    page.on('pageerror', (e) => console.error('page error:', e.message));
    await page.goto(url);
    await page.locator('.rec-scroll [role="row"]').first().waitFor(WAIT);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    server?.child.stdin?.end();
    server?.child.kill('SIGTERM');
  }, 30_000);

  const picture = () => page.locator('.rec-scroll canvas.rec-canvas');
  const domRows = () => page.locator('.rec-scroll [role="row"]');
  const newestDrawn = async () => Number(await picture().getAttribute('data-newest-seq'));
  /** Pixels of the picture that are not the blank canvas: rows drawn, not an empty box. */
  const inkedPixels = () =>
    page.evaluate(`(() => {
      const c = document.querySelector('.rec-scroll canvas.rec-canvas');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
      return n;
    })()`) as Promise<number>;

  it('draws the following list as a picture at 6,000 records a second, rows and all', async () => {
    expect(await domRows().count()).toBeGreaterThan(5);
    await server.ask('feed', { rate: 6000 });
    await picture().waitFor(WAIT);
    expect(await domRows().count()).toBe(0);
    const first = await newestDrawn();
    await expect.poll(newestDrawn, WAIT).toBeGreaterThan(first + 1000);
    expect(await inkedPixels()).toBeGreaterThan(5000);
    // The list says how many it shows, as it does with DOM rows, and that it is a picture, and why.
    await expect
      .poll(() => page.getByLabel('Record counts').textContent(), WAIT)
      .toMatch(/showing [\d,]+ .* · [\d,]+ rows\/s, drawn as a picture/);
    const grid = page.getByRole('grid', { name: 'Record list' });
    expect(await grid.getAttribute('aria-busy')).toBe('true');
    expect(await grid.getAttribute('aria-describedby')).toBe('records-picture-note');
  });

  it('a click on the picture selects the row under it: DOM rows back, the row in place, not following', async () => {
    const box = (await picture().boundingBox())!;
    const clickY = box.y + box.height - 22 * 2.5;
    await page.mouse.click(box.x + 300, clickY);
    const selected = page.locator('[role="row"][aria-selected="true"]');
    await expect.poll(() => selected.count(), WAIT).toBe(1);
    expect(await picture().count()).toBe(0);
    await expect(page.getByRole('button', { name: /Jump to latest/ }).isVisible()).resolves.toBe(true);
    const rowBox = (await selected.boundingBox())!;
    expect(clickY).toBeGreaterThanOrEqual(rowBox.y);
    expect(clickY).toBeLessThan(rowBox.y + rowBox.height);
    // The inspector shows the record chosen.
    const seq = await selected.getAttribute('data-seq');
    expect(Number(seq)).toBeGreaterThan(0);
  });

  it('Jump to latest follows again and draws the picture; pausing the display gives the rows back', async () => {
    await page.getByRole('button', { name: /Jump to latest/ }).click();
    await picture().waitFor(WAIT);
    await page.getByRole('button', { name: 'Pause display' }).click();
    await expect.poll(() => domRows().count(), WAIT).toBeGreaterThan(5);
    expect(await picture().count()).toBe(0);
    await page.getByRole('button', { name: 'Resume display' }).click();
    await picture().waitFor(WAIT);
  });

  it('a stream that stops gives the rows back, the newest drawn among them', async () => {
    await server.ask('feed', { rate: 0 });
    await expect.poll(() => domRows().count(), WAIT).toBeGreaterThan(5);
    expect(await picture().count()).toBe(0);
    const newestRow = await domRows().evaluateAll((rows) =>
      Math.max(...rows.map((r) => Number(r.getAttribute('data-seq')))),
    );
    expect(newestRow).toBeGreaterThan(1000);
  });
});
