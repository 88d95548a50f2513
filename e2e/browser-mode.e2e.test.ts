// The app as a person uses it, in browser mode: launched with
// `npm start -- --browser --no-open`, driven in Debian's Chromium.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import {
  browserOrSkip,
  clickStart,
  openBrowserModeSession,
  resultsDir,
  type BrowserModeSession,
  type LaunchedApp,
  rankChip,
} from './support';

const exe = browserOrSkip('browser-mode e2e');
// Generous waits: the machine may be busy (tests share few cores); nothing here measures speed.
const WAIT = { timeout: 120_000 };
const TEST_TIMEOUT = 240_000;

describe.skipIf(!exe)('browser mode, end to end', { timeout: TEST_TIMEOUT }, () => {
  let session: BrowserModeSession | undefined;
  let app: LaunchedApp;
  let page: Page;
  // Saved traces go to a folder of this run (the app's default is ~/relay-lab-traces).
  const tracesDir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-e2e-traces-'));
  const cspViolations: string[] = [];
  const shot = (name: string) => page.screenshot({ path: path.join(resultsDir, `${name}.png`) });

  beforeAll(async () => {
    // The first launch may build the window (electron-vite) before it serves.
    session = await openBrowserModeSession(exe!, {
      tracesDir,
      viewport: { width: 1440, height: 900 },
      // The window's first theme follows the system: ask for the dark one.
      colorScheme: 'dark',
      onPage: (p) =>
        p.on('console', (m) => {
          if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
        }),
    });
    ({ app, page } = session);
  }, 300_000);

  afterAll(async () => {
    await session?.close();
  }, 30_000);

  /** The topology shows exactly `count` ranks, every one alive. */
  async function expectRanksAlive(count: number): Promise<void> {
    const topology = page.getByRole('region', { name: 'Topology' });
    await expect.poll(() => topology.locator('[aria-label^="rank "]').count(), WAIT).toBe(count);
    for (let r = 0; r < count; r++)
      await expect
        .poll(() => page.getByRole('button', { name: rankChip(r) }).getAttribute('data-state'), WAIT)
        .toBe('alive');
  }

  it('prints the URL with a token on a line of its own', () => {
    expect(app.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{20,}$/);
  });

  it('shows the default topology: 2 hosts, 8 live ranks, records flowing', async () => {
    await expectRanksAlive(8);
    await expect.poll(() => page.getByRole('group', { name: 'host h0' }).count()).toBe(1);
    await expect.poll(() => page.getByRole('group', { name: 'host h1' }).count()).toBe(1);
    const rows = page.getByRole('region', { name: 'Records' }).getByRole('row');
    await expect.poll(() => rows.count(), WAIT).toBeGreaterThan(5);
    const seqOfLast = async () => Number(await rows.last().getAttribute('data-seq'));
    const first = await seqOfLast();
    await expect.poll(seqOfLast, WAIT).toBeGreaterThan(first);
    await shot('01-default-topology');
  });

  it('selects a HostFrame and reads its header fields and bytes in the inspector', async () => {
    const filter = page.getByRole('textbox', { name: 'Filter' });
    await filter.fill('kind == HostFrame');
    const row = page
      .getByRole('region', { name: 'Records' })
      .locator('[role="row"][data-kind="HostFrame"]')
      .first();
    await row.waitFor(WAIT);
    // Hold the display still so the row stays put while it is clicked.
    await page.getByRole('button', { name: 'Pause display' }).click();
    await row.click();
    const inspector = page.getByRole('region', { name: 'Inspector' });
    await expect.poll(() => inspector.getByRole('treeitem').count(), WAIT).toBeGreaterThan(3);
    // The mux header: magic 0xF10D17D0, little endian, in the first bytes of the hex view.
    const bytes = inspector.getByRole('region', { name: 'Bytes' });
    const firstBytes = async () =>
      (await bytes.locator('.hb').evaluateAll((els) => els.slice(0, 4).map((e) => e.textContent))).join(' ');
    await expect.poll(firstBytes, WAIT).toBe('d0 17 0d f1');
    const labels = await inspector
      .getByRole('treeitem')
      .evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') ?? ''));
    expect(labels.join('\n')).toMatch(/magic/i);
    // Selecting a field highlights its bytes; clicking a byte selects its field.
    await inspector.getByRole('treeitem').filter({ hasText: /magic/i }).first().click();
    await expect.poll(() => bytes.locator('.hb.hl').count()).toBeGreaterThanOrEqual(4);
    await bytes.locator('.hb[data-offset="13"]').click();
    const selected = inspector.locator('[role="treeitem"][aria-selected="true"]');
    await expect.poll(() => selected.count()).toBe(1);
    const [start, len] = await Promise.all([
      selected.getAttribute('data-offset'),
      selected.getAttribute('data-length'),
    ]);
    expect(Number(start)).toBeLessThanOrEqual(13);
    expect(Number(start) + Number(len)).toBeGreaterThan(13);
    await shot('02-inspector-hostframe');
    await page.getByRole('button', { name: 'Resume display' }).click();
    await filter.fill('');
  });

  it('kills a rank: it shows dead while rounds go on', async () => {
    const rank5 = page.getByRole('button', { name: rankChip(5) });
    await rank5.click();
    await page.getByRole('button', { name: 'Kill rank' }).click();
    await expect.poll(() => rank5.getAttribute('data-state'), WAIT).toBe('dead');
    const rounds = async () =>
      Number(((await page.getByLabel('Rounds completed').textContent()) ?? '').replace(/\D/g, ''));
    const after = await rounds();
    await expect.poll(rounds, WAIT).toBeGreaterThan(after + 2);
    for (const r of [0, 1, 2, 3, 4, 6, 7])
      expect(await page.getByRole('button', { name: rankChip(r) }).getAttribute('data-state')).toBe('alive');
    // Its dead declaration in Findings jumps to a record of that rank.
    const findings = page.getByRole('region', { name: 'Findings' });
    await findings.getByRole('button', { name: 'Jump to a record of rank 5' }).first().click(WAIT);
    await expect
      .poll(
        () =>
          page
            .getByRole('region', { name: 'Inspector' })
            .getByText(/rank 5/)
            .count(),
        WAIT,
      )
      .toBeGreaterThan(0);
    const selected = page
      .getByRole('region', { name: 'Records' })
      .locator('[role="row"][aria-selected="true"]');
    await expect.poll(() => selected.count(), WAIT).toBe(1);
    expect(await selected.evaluate((e) => e.children[6]?.textContent)).toBe('5');
    await shot('03-rank-killed');
  });

  it('pauses a rank and resumes it', async () => {
    const rank2 = page.getByRole('button', { name: rankChip(2) });
    await rank2.click();
    await page.getByRole('button', { name: 'Pause rank' }).click();
    await expect.poll(() => rank2.getAttribute('data-state'), WAIT).toBe('paused');
    await shot('03b-rank-paused');
    await page.getByRole('button', { name: 'Resume rank' }).click();
    await expect.poll(() => rank2.getAttribute('data-state'), WAIT).toBe('alive');
  });

  it('reads the byte savings for K = 4', async () => {
    const savings = page.getByRole('region', { name: 'Byte savings' });
    const h0 = savings.getByRole('row', { name: 'savings h0' });
    await expect.poll(() => h0.getAttribute('data-k')).toBe('4');
    await expect
      .poll(async () => Number((await h0.getAttribute('data-ratio')) || NaN), WAIT)
      .toBeGreaterThan(0);
    const ratio = Number(await h0.getAttribute('data-ratio'));
    // fold sends one frame where direct sends K: about 1/4, plus header overhead.
    expect(ratio).toBeGreaterThan(0.24);
    expect(ratio).toBeLessThan(0.27);
    expect(await h0.textContent()).toContain('K = 4');
    await shot('04-byte-savings');
  });

  it('filters the list, and shows an error as you type', async () => {
    const filter = page.getByRole('textbox', { name: 'Filter' });
    await filter.fill('rank == 3');
    const rows = page.getByRole('region', { name: 'Records' }).getByRole('row');
    const rankCells = () => rows.evaluateAll((els) => els.map((e) => e.children[6]?.textContent ?? ''));
    // The list re-filters on the next frame: wait for it rather than read the old rows.
    await expect.poll(async () => [...new Set(await rankCells())], WAIT).toEqual(['3']);
    // Following one rank pulls its stream out of the multiplexed uplink too.
    await filter.fill('');
    await page.getByLabel('Follow rank').selectOption('6');
    await expect.poll(async () => [...new Set(await rankCells())], WAIT).toEqual(['6']);
    expect(
      await rows.evaluateAll((els) => els.some((e) => (e.children[2]?.textContent ?? '').includes('uplink'))),
    ).toBe(true);
    await page.getByLabel('Follow rank').selectOption('');
    await filter.fill('rank == ');
    await expect.poll(() => filter.getAttribute('aria-invalid')).toBe('true');
    await expect.poll(() => page.locator('#filter-error').textContent()).toContain('expected a value');
    await shot('05-filter-error');
    await filter.fill('verdict != ok');
    await expect.poll(() => filter.getAttribute('aria-invalid')).toBe(null);
    await filter.fill('');
  });

  it('switches theme with a shortcut and keeps it across a reload', async () => {
    const theme = () => page.locator('html').getAttribute('data-theme');
    const before = await theme();
    // Click a plain heading so no field holds the focus and the key reaches the window.
    await page.getByRole('heading', { name: 'Ladder' }).click();
    await page.keyboard.press('t');
    await expect.poll(theme).not.toBe(before);
    const after = await theme();
    await page.keyboard.press('?');
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    await shot('06-shortcuts-help');
    await page.keyboard.press('Escape');
    await page.reload();
    await expect.poll(() => page.locator('[aria-label^="rank "]').count(), WAIT).toBe(8);
    expect(await theme()).toBe(after);
    await shot('07-theme-after-reload');
  });

  it('pauses rounds, steps one, and resumes', async () => {
    const toolbar = page.getByRole('toolbar', { name: 'Run controls' });
    const rounds = async () =>
      Number(((await page.getByLabel('Rounds completed').textContent()) ?? '').replace(/\D/g, ''));
    await page.getByRole('button', { name: 'Pause rounds' }).click();
    await expect.poll(() => toolbar.textContent(), WAIT).toContain('rounds paused');
    const step = page.getByRole('button', { name: 'Step round' });
    await expect.poll(() => step.isEnabled(), WAIT).toBe(true);
    const before = await rounds();
    await step.click();
    await expect.poll(rounds, WAIT).toBeGreaterThanOrEqual(before + 1);
    await page.getByRole('button', { name: 'Resume rounds' }).click();
    await expect.poll(() => toolbar.textContent(), WAIT).not.toContain('rounds paused');
  });

  it('applies a link fault live and clears it, each shown in Findings', async () => {
    await page.getByText('Link faults').click();
    await page.getByLabel('Fault link').selectOption('h0.uplink.data');
    await page.getByLabel('Fault kind').selectOption('latency');
    await page.getByRole('button', { name: 'Apply fault' }).click();
    const findings = page.getByRole('region', { name: 'Findings' });
    await expect
      .poll(() => findings.getByText(/link h0\.uplink\.data \(up\): latencyMs=50/).count(), WAIT)
      .toBeGreaterThan(0);
    await expect
      .poll(() => page.getByRole('list', { name: 'Active faults' }).textContent(), WAIT)
      .toContain('h0.uplink.data');
    await shot('03c-link-fault');
    await page.getByRole('button', { name: 'Clear fault on h0.uplink.data' }).click();
    await expect
      .poll(() => findings.getByText(/link h0\.uplink\.data: cleared/).count(), WAIT)
      .toBeGreaterThan(0);
    await page.getByText('Link faults').click();
  });

  it('keeps the records it had across a reload (the window catches up on connect)', async () => {
    const rows = page.getByRole('region', { name: 'Records' }).getByRole('row');
    await expect.poll(() => rows.count(), WAIT).toBeGreaterThan(5);
    const seen = Number(await rows.last().getAttribute('data-seq'));
    await page.reload();
    const filter = page.getByRole('textbox', { name: 'Filter' });
    await filter.fill(`seq == ${seen}`);
    // A fresh page without the catch-up would only ever see records newer than this one.
    await expect.poll(() => rows.count(), WAIT).toBe(1);
    expect(Number(await rows.first().getAttribute('data-seq'))).toBe(seen);
    await filter.fill('');
  });

  it('saves the session as a trace and pcapng, opens it offline, scrubs, inspects bytes, and returns to live', async () => {
    await page.getByRole('button', { name: 'Save trace' }).click();
    const notice = page.getByRole('status', { name: 'Saved trace' });
    await expect.poll(() => notice.textContent(), WAIT).toMatch(/Saved relay-lab-\d{8}-\d{6}\.trace\.ndjson/);
    const name = /(relay-lab-\S+\.trace\.ndjson)/.exec((await notice.textContent()) ?? '')![1]!;
    expect(fs.existsSync(path.join(tracesDir, name))).toBe(true);
    // The same file over HTTP, as the Download link offers it (token in the link).
    const href = await notice.getByRole('link', { name: 'Download' }).getAttribute('href');
    const download = await page.request.get(new URL(href!, app.url).toString());
    expect(download.status()).toBe(200);
    expect(download.headers()['content-disposition']).toContain(name);
    expect((await download.text()).startsWith('{"format":"relay-lab-trace"')).toBe(true);
    await shot('10-trace-saved');

    await page.getByRole('button', { name: 'Export pcapng' }).click();
    await expect.poll(() => notice.textContent(), WAIT).toMatch(/\.trace\.pcapng/);
    const pcapng = /(relay-lab-\S+\.trace\.pcapng)/.exec((await notice.textContent()) ?? '')![1]!;
    // A pcapng Section Header Block starts with 0x0A0D0D0A.
    expect(fs.readFileSync(path.join(tracesDir, pcapng)).subarray(0, 4).toString('hex')).toBe('0a0d0d0a');

    const banner = page.getByRole('region', { name: 'Trace' });
    try {
      await inspectTraceOffline(name, banner);
    } finally {
      // The tests after this one need the live lab back, whatever happened here.
      if (await banner.count()) await banner.getByRole('button', { name: 'Back to live' }).click();
    }
    await expect.poll(() => banner.count(), WAIT).toBe(0);
    // Live records flow again (the list may be scrolled anywhere: read the counts).
    const seenCount = async () =>
      Number(
        /of ([\d,]+) seen/
          .exec((await page.getByLabel('Record counts').textContent()) ?? '')?.[1]
          ?.replace(/,/g, ''),
      );
    const live = await seenCount();
    await expect.poll(seenCount, WAIT).toBeGreaterThan(live);
    expect(await page.getByRole('button', { name: rankChip(5) }).getAttribute('data-state')).toBe('dead');
    // The live findings come back with it (rank 5 was killed before the trace was opened).
    const findings = page.getByRole('region', { name: 'Findings' });
    await expect
      .poll(() => findings.getByRole('button', { name: 'Jump to a record of rank 5' }).count(), WAIT)
      .toBeGreaterThan(0);
    await shot('13-back-to-live');
  });

  async function inspectTraceOffline(name: string, banner: ReturnType<Page['getByRole']>): Promise<void> {
    await page.getByRole('button', { name: 'Open trace' }).click();
    const dialog = page.getByRole('dialog', { name: 'Open trace' });
    await dialog.getByRole('button', { name: `trace ${name}` }).click(WAIT);
    await expect.poll(() => banner.textContent(), WAIT).toContain(`Viewing trace ${name} (offline)`);
    await expect.poll(() => page.locator('[aria-label^="rank "]').count(), WAIT).toBe(8);
    const rows = page.getByRole('region', { name: 'Records' }).getByRole('row');
    await expect.poll(() => rows.count(), WAIT).toBeGreaterThan(5);
    const lastSeq = () => rows.last().getAttribute('data-seq').then(Number);
    const atEnd = await lastSeq();
    await shot('11-trace-open');

    // Scrub to a third of the way: the lists hold only what had happened by then.
    const slider = banner.getByRole('slider', { name: 'Trace timeline' });
    const max = Number(await slider.getAttribute('max'));
    await slider.fill(String(max / 3));
    await expect.poll(lastSeq, WAIT).toBeLessThan(atEnd);
    const time = banner.getByLabel('Trace time', { exact: true });
    expect(await time.textContent()).not.toMatch(/^(\S+ \S+) \/ \1$/);

    const filter = page.getByRole('textbox', { name: 'Filter' });
    await filter.fill('kind == HostFrame');
    const row = page
      .getByRole('region', { name: 'Records' })
      .locator('[role="row"][data-kind="HostFrame"]')
      .first();
    await row.click(WAIT);
    const bytes = page.getByRole('region', { name: 'Inspector' }).getByRole('region', { name: 'Bytes' });
    const firstBytes = async () =>
      (await bytes.locator('.hb').evaluateAll((els) => els.slice(0, 4).map((e) => e.textContent))).join(' ');
    await expect.poll(firstBytes, WAIT).toBe('d0 17 0d f1');
    await shot('12-trace-scrubbed-inspected');
    await filter.fill('');

    // Uploading a file from disk opens it the same way.
    await page.getByRole('button', { name: 'Open trace' }).click();
    await dialog.getByLabel('Upload a trace file').setInputFiles(path.join(tracesDir, name));
    const uploaded = name.replace(/\.ndjson$/, '-2.ndjson');
    await expect.poll(() => banner.textContent(), WAIT).toContain(`Viewing trace ${uploaded} (offline)`);
  }

  it('starts a new topology from the form, kills a host, and stops', async () => {
    await page.getByText('New topology (used by Start)').click();
    await page.getByLabel('Hosts').fill('3');
    await page.getByLabel('Ranks per host').fill('2');
    await page.getByLabel('Model (MiB)').fill('0.25');
    // The default session is running: Start asks before replacing it.
    expect(await clickStart(page)).toBe(true);
    await expectRanksAlive(6);
    await expect
      .poll(() => page.getByRole('row', { name: 'savings h2' }).getAttribute('data-k'), WAIT)
      .toBe('2');
    // Compare modes runs this workload in fold, forward and direct and tables the measured ratios.
    await page.getByRole('button', { name: 'Compare modes' }).click();
    const table = page.getByRole('table', { name: 'Compare modes' });
    await table.waitFor(WAIT);
    const cells = async (mode: string) =>
      (
        await table.getByRole('row').filter({ hasText: mode }).first().getByRole('cell').allTextContents()
      ).map((c) => c.trim());
    const fold = await cells('fold');
    const direct = await cells('direct');
    // columns: mode, rounds, uplink/host/round, measured ratio, theory, ms/round (K = 2 on every host);
    // a figure is shown once when every host agrees, else host by host ("a / b / c").
    const perHost = (cell: string) => cell.split('/').map((v) => parseFloat(v));
    for (const r of perHost(fold[3])) {
      expect(r).toBeGreaterThan(0.45);
      expect(r).toBeLessThan(0.6);
    }
    expect(perHost(fold[4])).toContain(0.5);
    for (const r of perHost(direct[3])) expect(r).toBeCloseTo(1, 2);
    await shot('08a-compare-modes');
    await page.getByRole('button', { name: 'relay h2' }).click();
    await page.getByRole('button', { name: 'Kill host' }).click();
    await expect
      .poll(() => page.getByRole('group', { name: 'host h2' }).getAttribute('data-state'), WAIT)
      .toBe('dead');
    for (const r of [4, 5])
      await expect
        .poll(() => page.getByRole('button', { name: rankChip(r) }).getAttribute('data-state'), WAIT)
        .toBe('dead');
    const rounds = async () =>
      Number(((await page.getByLabel('Rounds completed').textContent()) ?? '').replace(/\D/g, ''));
    const after = await rounds();
    await expect.poll(rounds, WAIT).toBeGreaterThan(after + 1);
    await shot('08-new-topology-host-killed');
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect
      .poll(() => page.getByRole('toolbar', { name: 'Run controls' }).textContent(), WAIT)
      .toContain('stopped');
  });

  it('runs a reproduction from the window and shows its verdict', async () => {
    await page.getByRole('button', { name: 'Reproductions' }).click();
    const dialog = page.getByRole('dialog', { name: 'Reproductions' });
    await dialog.getByRole('button', { name: 'scenario hostile-length' }).click(WAIT);
    // The historical side is a lab-only behaviour and says so before it runs.
    expect(await dialog.textContent()).toContain('Historical run: lab-only historical behaviour');
    await dialog.getByRole('button', { name: 'Run reproduction' }).click();
    const result = dialog.getByRole('region', { name: 'Scenario result' });
    await result.waitFor(WAIT);
    expect(await result.getAttribute('data-verdict')).toBe('ok');
    expect(await result.textContent()).toContain('Verdict: ok');
    expect(await result.textContent()).toContain('Historical: reproduced');
    expect(await result.textContent()).toContain('flodl 0.7: held');
    await shot('09-reproduction-verdict');
    await dialog.getByRole('button', { name: 'Close' }).click();
  });

  it('refuses the page without the token, and the window ran without a CSP violation', async () => {
    const origin = new URL(app.url).origin;
    const res = await page.request.get(`${origin}/`);
    expect(res.status()).toBe(403);
    expect(res.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(cspViolations).toEqual([]);
  });
});
