// Issue 14 in the window, in Chromium (browser mode): a real cluster
// (`relay-lab controller`, `relay`, two `rank` processes) whose relay dials a
// tap added through the "Tap a cluster" dialog, its units seen in the
// records list and the inspector; and a pcapng of a real run opened through
// "Open capture" (uploaded through the traces folder's upload path),
// imported with the salt typed in the dialog, shown as a trace.
import { describe, it, expect, beforeAll, afterAll, afterEach } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import {
  browserOrSkip,
  CHROMIUM_ARGS,
  freshProfileDir,
  launchBrowserMode,
  resultsDir,
  root,
  type LaunchedApp,
} from './support';
import { killAll, startController, startHost } from './cluster-roles';
import { exportTraceFileToPcapng } from '../src-main/lab/trace/pcapng';

const exe = browserOrSkip('tap and capture e2e');
const WAIT = { timeout: 120_000 };
const SALT = '0badc0de00000000000000000000beef';

/** Taps and captures are a source of their own: the toolbar keeps them in its "More" menu. */
async function fromMoreMenu(page: Page, name: string): Promise<void> {
  await page.getByRole('button', { name: 'More ▾' }).click();
  await page.getByRole('menu', { name: 'More controls' }).getByRole('button', { name }).click();
}

describe.skipIf(!exe)('taps and captures in the window, end to end', { timeout: 300_000 }, () => {
  let app: LaunchedApp;
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  let work: string;
  const started: ChildProcess[] = [];

  beforeAll(async () => {
    fs.mkdirSync(resultsDir, { recursive: true });
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-e2e-tap-'));
    // --idle: the lab's own topology stays stopped, so every unit listed comes from the tap.
    app = await launchBrowserMode(240_000, ['--idle', '--traces-dir', path.join(work, 'traces')]);
    profile = freshProfileDir();
    context = await chromium.launchPersistentContext(profile, {
      executablePath: exe!,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1920, height: 1080 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (e) => console.error('page error:', e.message));
    await page.goto(app.url);
  }, 300_000);

  afterEach(() => killAll(started));

  afterAll(async () => {
    killAll(started);
    await context?.close();
    await app?.stop();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
    if (work) fs.rmSync(work, { recursive: true, force: true });
  }, 30_000);

  const records = () => page.getByRole('region', { name: 'Records' }).locator('[role="row"][data-seq]');

  it("a tap added in the dialog shows a real cluster's units live", async () => {
    const { controller, port } = await startController(SALT, 2, started);
    await fromMoreMenu(page, 'Tap a cluster');
    const dialog = page.getByRole('dialog', { name: 'Tap a cluster' });
    await dialog.getByRole('textbox', { name: 'Listen' }).fill('127.0.0.1:0');
    await dialog.getByRole('textbox', { name: 'Upstream' }).fill(`127.0.0.1:${port}`);
    await dialog.getByRole('textbox', { name: 'Salt' }).fill(SALT);
    await dialog.getByRole('textbox', { name: 'Name' }).fill('h0.uplink');
    await dialog.getByRole('button', { name: 'Add tap' }).click();
    const row = dialog.getByRole('row', { name: 'tap 0' });
    await row.waitFor(WAIT);
    // The bound port (0 asked for any free one) is in the row's listen cell.
    const listen = (await row.locator('td').nth(2).innerText()).trim();
    const tapPort = Number(/:(\d+)$/.exec(listen)?.[1]);
    expect(tapPort).toBeGreaterThan(0);
    // The row's Stop stays inside its dialog at the sizes people use (it spilled out at 1440x900).
    for (const viewport of [
      { width: 1440, height: 900 },
      { width: 1024, height: 700 },
    ]) {
      await page.setViewportSize(viewport);
      const spill = await dialog.evaluate((d) => {
        const stop = [...d.querySelectorAll('button')].find((b) => b.textContent === 'Stop')!;
        return stop.getBoundingClientRect().right - d.getBoundingClientRect().right;
      });
      expect(spill, `${viewport.width}x${viewport.height}`).toBeLessThanOrEqual(0);
    }
    await page.setViewportSize({ width: 1920, height: 1080 });
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'Viewing 1 tap' }).count(), WAIT)
      .toBe(1);
    await page.keyboard.press('Escape');

    const { relay, ranks } = await startHost(
      { salt: SALT, ranks: [0, 1], worldSize: 2, controllerPort: tapPort, rounds: 4 },
      started,
    );
    for (const r of ranks) expect((await r.done).code).toBe(0);
    expect((await relay.done).code).toBe(0);
    expect((await controller.done).code).toBe(0);

    // The list is virtual (only rows in sight exist): filter to count.
    const liveFilter = page.getByRole('textbox', { name: 'Filter' });
    await liveFilter.fill('verdict != ok');
    await expect.poll(() => records().count(), WAIT).toBe(0);
    await liveFilter.fill('kind == Broadcast');
    await expect.poll(() => records().count(), WAIT).toBe(4);
    // Both channels of the host's uplink came through the tap.
    for (const link of ['h0.uplink.control', 'h0.uplink.data']) {
      await liveFilter.fill(`link == '${link}'`);
      await expect.poll(() => records().count(), WAIT).toBeGreaterThan(0);
    }
    await liveFilter.fill('kind == HostFrame');
    const hostFrames = records().filter({ hasText: 'HostFrame' });
    await expect.poll(() => hostFrames.count(), WAIT).toBe(4);
    // The inspector dissects a tapped unit (its bytes come from the tap's store, its MAC from the salt).
    await hostFrames.first().click();
    const inspector = page.getByRole('region', { name: 'Inspector' });
    await expect.poll(() => inspector.getByRole('treeitem').count(), WAIT).toBeGreaterThan(2);
    await page.screenshot({ path: path.join(resultsDir, 'tap-live.png') });

    // The tap's counters in the dialog; stop it (the listener closes).
    await page.getByRole('button', { name: 'Manage taps' }).click();
    const d2 = page.getByRole('dialog', { name: 'Tap a cluster' });
    await d2.getByRole('row', { name: 'tap 0' }).getByRole('button', { name: 'Stop' }).click();
    await expect
      .poll(() => d2.getByRole('row', { name: 'tap 0' }).locator('td').nth(4).innerText(), WAIT)
      .toMatch(/stopp/);
    // Back to the lab: the tap view is left, the lab's own (idle) view returns.
    await d2.getByRole('button', { name: 'Back to the lab' }).click();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('region', { name: 'Taps' }).count(), WAIT).toBe(0);
  });

  it('"Open capture" imports a pcapng of a real run and shows it as a trace', async () => {
    const trace = path.join(work, 'run.trace.ndjson');
    const run = spawnSync(
      process.execPath,
      [
        path.join(root, 'bin', 'relay-lab.mjs'),
        'run',
        '--hosts',
        '1',
        '--ranks-per-host',
        '2',
        '--rounds',
        '3',
        '--model-bytes',
        '4KiB',
        '--salt',
        SALT,
        '--trace',
        trace,
      ],
      { cwd: root, encoding: 'utf8' },
    );
    expect(run.status, run.stderr).toBe(0);
    const capture = path.join(work, 'cluster.pcapng');
    await exportTraceFileToPcapng(trace, capture);

    await fromMoreMenu(page, 'Open capture');
    const dialog = page.getByRole('dialog', { name: 'Open capture' });
    await dialog.getByRole('textbox', { name: 'Salt' }).fill(SALT);
    await dialog.getByLabel('Capture file').setInputFiles(capture);
    await dialog.getByRole('button', { name: 'Open' }).click();
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'Viewing trace cluster.pcapng' }).count(), WAIT)
      .toBe(1);
    const notice = page.getByRole('status', { name: 'Imported capture' });
    await expect.poll(() => notice.innerText(), WAIT).toMatch(/6 flodl streams.*0 undecodable/);
    // Its summary is the capture's own (issue 30, item 10): a 4 KiB f32 model, 3 whole rounds, a ladder.
    const topo = page.getByRole('region', { name: 'Topology' });
    await expect.poll(() => topo.innerText(), WAIT).toMatch(/4\.0 KiB model · f32/);
    expect(await topo.innerText()).not.toMatch(/MiB model/);
    await expect.poll(() => page.getByLabel('Rounds completed').innerText(), WAIT).toBe('3 rounds done');
    const ladderHead = page.getByRole('region', { name: 'Ladder' }).locator('.panel-head');
    await expect.poll(() => ladderHead.innerText(), WAIT).toMatch(/round 2/);
    // The list is virtual (only rows in sight exist): filter to count.
    const filter = page.getByRole('textbox', { name: 'Filter' });
    await filter.fill('kind == HostFrame');
    await expect.poll(() => records().count(), WAIT).toBe(3);
    await filter.fill('verdict != ok');
    await expect.poll(() => records().count(), WAIT).toBe(0);
    await filter.fill('');
    await page.screenshot({ path: path.join(resultsDir, 'capture-open.png') });

    // A wrong salt: every MAC fails, and the dialog's import still opens with the units named undecodable.
    await page.getByRole('button', { name: 'Back to live' }).click();
    await fromMoreMenu(page, 'Open capture');
    const again = page.getByRole('dialog', { name: 'Open capture' });
    await again.getByRole('textbox', { name: 'Salt' }).fill('ff'.repeat(16));
    await again.getByLabel('Capture file').setInputFiles(capture);
    await again.getByRole('button', { name: 'Open' }).click();
    await expect.poll(() => notice.innerText(), WAIT).toMatch(/[1-9]\d* undecodable/);
    await filter.fill('verdict == HMAC_MISMATCH');
    await expect.poll(() => records().count(), WAIT).toBeGreaterThan(0);
    await filter.fill('');
  });
});
