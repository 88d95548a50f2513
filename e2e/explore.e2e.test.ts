// The Explore view end to end in browser mode (Chromium): a small sweep of
// real topologies from the window, the live session saved before it stops,
// the table and charts, one case's trace opened, the result saved as CSV and
// the saved sweep opened again.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { browserOrSkip, openBrowserModeSession, resultsDir, type BrowserModeSession } from './support';

const exe = browserOrSkip('explore e2e');
// Generous waits: the machine may be busy; nothing here measures speed.
const WAIT = { timeout: 180_000 };
// Page actions wait as long (a click on a busy machine can take more than Playwright's 30 s default).
const ACT = { timeout: 180_000 };

describe.skipIf(!exe)('Explore view, end to end', { timeout: 400_000 }, () => {
  let session: BrowserModeSession | undefined;
  let page: Page;
  const tracesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-e2e-explore-'));

  beforeAll(async () => {
    session = await openBrowserModeSession(exe!, {
      tracesDir,
      viewport: { width: 1600, height: 1000 },
      colorScheme: 'dark',
    });
    ({ page } = session);
  }, 300_000);

  afterAll(async () => {
    await session?.close();
  }, 30_000);

  it('runs a sweep, shows it against theory, opens a case trace, saves and reopens it', async () => {
    // The default topology is running: the sweep must save it before stopping it.
    await expect.poll(() => page.getByText('running', { exact: true }).count(), WAIT).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Explore', exact: true }).click(ACT);
    const dialog = page.getByRole('dialog', { name: 'Explore topologies' });
    await dialog.getByLabel('Topologies').fill('1x2,2x1', ACT);
    await dialog.getByLabel('Model size').fill('4KiB', ACT);
    // exact: "Warm-up rounds" also contains "Rounds".
    await dialog.getByLabel('Rounds', { exact: true }).fill('2', ACT);
    await dialog.getByLabel('Uplink bandwidth MB/s').fill('', ACT);
    await expect.poll(() => dialog.getByLabel('Save the live session, then stop it').isChecked()).toBe(true);
    await dialog.getByRole('button', { name: 'Run sweep' }).click(ACT);
    // From the click on, Run is disabled (saving the live session, then the sweep): a second click does nothing.
    expect(await dialog.getByRole('button', { name: /^(Saving|Running)…$/ }).isDisabled(ACT)).toBe(true);
    await expect
      .poll(() => dialog.getByText(/Live session saved as relay-lab-\S+ and stopped/).count(), WAIT)
      .toBe(1);
    // A progress bar and Cancel while it runs.
    await expect.poll(() => dialog.getByLabel('Cases done').count(), WAIT).toBe(1);
    const rows = dialog.locator('tr.explore-case');
    await expect.poll(() => rows.count(), WAIT).toBe(4);
    await expect.poll(() => dialog.getByText(/Sweep saved as sweep-\S+\.sweep\.json/).count(), WAIT).toBe(1);
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-case')))).toEqual([
      '1x2 fold',
      '1x2 direct',
      '2x1 fold',
      '2x1 direct',
    ]);
    // Measured data bytes equal the theory in every case, and every round is ok.
    for (let i = 0; i < 4; i++) {
      expect(await rows.nth(i).locator('td').nth(3).textContent()).toMatch(/=$/);
      // After the auto warm-up (the form's default), which says how many rounds it took.
      expect(await rows.nth(i).locator('td').nth(9).textContent()).toMatch(
        /^2\/2 ok \+([2-9]|[1-3]\d|40) warm-up$/,
      );
    }
    // Where each case's round goes: its longest stage, every stage in the cell's title.
    for (let i = 0; i < 4; i++) {
      const cell = rows.nth(i).locator('td').nth(10);
      expect(await cell.textContent()).toMatch(/^[a-zA-Z]+ \d+\.\d$/);
      expect(await cell.getAttribute('title')).toMatch(/rankEncodeSend .* ms, .*rankVerify .* ms/);
    }
    // The round model's prediction beside each measured round (this machine's calibration or the reference).
    for (let i = 0; i < 4; i++) {
      const cell = rows.nth(i).locator('td').nth(11);
      expect(await cell.textContent()).toMatch(/^\d+\.\d ms [+-]\d+%/);
      expect(await cell.getAttribute('title')).toMatch(/^predicted .* ms \([+-]\d+ %\), bound by \w+\/\w+/);
    }
    expect(await dialog.locator('.explore-chart .u-legend').nth(1).textContent()).toMatch(/fold predicted/);
    expect(await dialog.getByLabel('Fold time benefit').textContent()).toMatch(
      /1x2: fold .* ms vs direct .* ms/,
    );
    expect(await dialog.locator('.explore-chart canvas').count()).toBeGreaterThanOrEqual(2);
    await page.screenshot({ path: path.join(resultsDir, 'explore-sweep.png') });

    // Results save as CSV too.
    await dialog.getByRole('button', { name: 'Save CSV' }).click(ACT);
    await expect.poll(() => dialog.getByText(/Saved sweep-\S+\.sweep\.csv/).count(), WAIT).toBe(1);
    const csv = fs.readdirSync(tracesDir).find((n) => n.endsWith('.sweep.csv'))!;
    expect(fs.readFileSync(path.join(tracesDir, csv), 'utf8').split('\n')[0]).toMatch(/^topology,mode,/);

    // A click on a case opens its trace.
    await rows.nth(2).click(ACT);
    const banner = page.getByRole('region', { name: 'Trace' });
    await expect
      .poll(() => banner.getByRole('status').textContent(), WAIT)
      .toMatch(/Viewing trace sweep-\S+-c02-2x1-fold\.trace\.ndjson/);
    await page.screenshot({ path: path.join(resultsDir, 'explore-case-trace.png') });
    await banner.getByRole('button', { name: 'Back to live' }).click(ACT);

    // The saved sweep opens again in the view (after a reload: nothing held in the page).
    await page.reload(ACT);
    await page.getByRole('button', { name: 'Explore', exact: true }).click(ACT);
    await expect.poll(() => dialog.locator('tr.explore-case').count()).toBe(0);
    const picker = dialog.getByLabel('Open a saved sweep');
    const json = fs.readdirSync(tracesDir).find((n) => n.endsWith('.sweep.json'))!;
    await expect.poll(() => picker.locator('option').count(), WAIT).toBe(2);
    await picker.selectOption(json, ACT);
    await expect.poll(() => dialog.locator('tr.explore-case').count(), WAIT).toBe(4);
  });

  it('Beyond this machine: 512 x 8 at 100 Gb/s is bound by the controller ingress; a faster controller NIC moves it', async () => {
    const dialog = page.getByRole('dialog', { name: 'Explore topologies' });
    // Open unless the sweep test left it open (its overlay covers the toolbar).
    if (!(await dialog.isVisible()))
      await page.getByRole('button', { name: 'Explore', exact: true }).click(ACT);
    await dialog.getByRole('tab', { name: 'Beyond this machine' }).click(ACT);
    const beyond = dialog.getByRole('region', { name: 'Beyond this machine' });
    await beyond.getByLabel('Hosts', { exact: true }).fill('512', ACT);
    await beyond.getByLabel('Ranks per host').fill('8', ACT);
    await beyond.getByLabel('Model', { exact: true }).fill('1GiB', ACT);
    await beyond.getByLabel('Host NIC').fill('12.5GB/s', ACT);
    await beyond.getByLabel('Controller NIC').fill('100Gb/s', ACT);
    const bottleneck = (mode: string) => beyond.locator(`tr[data-mode=${mode}] td.bottleneck`).textContent();
    await expect.poll(() => bottleneck('fold'), WAIT).toMatch(/^controllerIngress \(uplink\)$/);
    expect(await bottleneck('direct')).toMatch(/^controllerIngress /);
    const lead = async () =>
      Number(
        /over direct: (\d+\.\d+)x \(K = 8\)/.exec(
          (await beyond.getByLabel("Fold's lead").textContent()) ?? '',
        )![1],
      );
    const leadBefore = await lead();
    expect(leadBefore).toBeGreaterThan(6);
    expect(leadBefore).toBeLessThanOrEqual(8);
    // The chart: round time against hosts, the moves of the bottleneck named in its label.
    const chart = beyond.getByRole('img', { name: /Round time against hosts/ });
    expect(await chart.locator('canvas').count()).toBe(1);
    expect(await chart.getAttribute('aria-label')).toMatch(
      /fold: at \d+ hosts from \w+ to controllerIngress/,
    );
    await page.screenshot({ path: path.join(resultsDir, 'explore-beyond.png') });

    // The NIC the model names as enough: above it the fold round leaves the controller.
    const move = (await beyond.locator('tr[data-mode=fold] td.move').textContent())!;
    const need = /above ([\d.]+) GB\/s/.exec(move)![1];
    await beyond.getByLabel('Controller NIC').fill(`${(Number(need) * 1.2).toFixed(1)}GB/s`, ACT);
    await expect.poll(() => bottleneck('fold'), WAIT).toMatch(/^(relayCpu|hostUplink) /);
    expect(await lead()).not.toBeCloseTo(leadBefore, 1);
    await page.screenshot({ path: path.join(resultsDir, 'explore-beyond-moved.png') });

    // Out of range: one line, no crash.
    await beyond.getByLabel('Hosts', { exact: true }).fill('5000', ACT);
    await expect
      .poll(() => beyond.getByRole('alert').textContent(), WAIT)
      .toBe('hosts must be a whole number from 1 to 4096, got 5000');
  });
});
