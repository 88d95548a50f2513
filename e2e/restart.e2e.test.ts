// A tab whose lab goes away, in Debian's Chromium against browser mode's real
// server (src-main/web/server.ts) serving the built window: while nothing
// answers it says the lab is not running; when a new launch answers on the
// same address with a new token it says the lab was restarted and where the
// new address is, and stops retrying. A URL without a token gets the short
// page that says where the right URL is.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import type { LabApi, LabReply } from '@shared/lab/contract';
import { startWebServer, type WebServer } from '../src-main/web/server';
import { browserOrSkip, CHROMIUM_ARGS, root } from './support';

const exe = browserOrSkip('restart e2e');
const rendererDir = path.join(root, 'out', 'renderer');
const WAIT = { timeout: 60_000 };

/** A lab with no topology: every command answers that nothing runs (the test is about the connection). */
const idleLab: LabApi = {
  command: async () =>
    ({ ok: false, error: 'NOT_RUNNING', message: 'no topology in this test' }) as LabReply as never,
  subscribe: () => () => {},
};

describe.skipIf(!exe)('a tab whose lab restarts', { timeout: 120_000 }, () => {
  let browser: Browser;
  const servers: WebServer[] = [];

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: exe!, headless: true, args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    for (const s of servers) await s.close().catch(() => {});
  });

  it('says "not running" while nothing answers, then "restarted" with where the new address is', async () => {
    const first = await startWebServer({ api: idleLab, rendererDir });
    servers.push(first);
    const page = await browser.newPage({ viewport: { width: 1024, height: 700 } });
    await page.goto(first.url);
    await expect.poll(() => page.locator('.dot.open').count(), WAIT).toBe(1);

    await first.close();
    const notice = page.locator('[data-connection]');
    await expect.poll(() => notice.getAttribute('data-connection'), WAIT).toBe('stopped');
    expect(await notice.textContent()).toMatch(/The lab is not running: nothing answers at 127\.0\.0\.1:\d+/);

    // A new launch on the same port has a new token.
    const second = await startWebServer({ api: idleLab, rendererDir, port: first.port });
    servers.push(second);
    expect(second.token).not.toBe(first.token);
    await expect.poll(() => notice.getAttribute('data-connection'), WAIT).toBe('restarted');
    const text = (await notice.textContent()) ?? '';
    expect(text).toContain('The lab was restarted');
    expect(text).toContain('will not reconnect');
    expect(text).toMatch(/printed in its terminal/);
    // It stays that way: the tab does not keep retrying a token no launch will accept.
    await page.waitForTimeout(1500);
    expect(await notice.getAttribute('data-connection')).toBe('restarted');
    await page.close();
  });

  it('a URL without the token shows a short page that says where the right URL is', async () => {
    const s = await startWebServer({ api: idleLab, rendererDir });
    servers.push(s);
    const page = await browser.newPage();
    const res = await page.goto(`http://127.0.0.1:${s.port}/`);
    expect(res?.status()).toBe(403);
    expect(await page.locator('h1').textContent()).toBe('Relay Lab needs the address it printed');
    expect(await page.locator('body').textContent()).toContain(`http://127.0.0.1:${s.port}/?token=`);
    await page.close();
  });
});
