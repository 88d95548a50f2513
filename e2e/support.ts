// Helpers for the end-to-end tests: find a browser, launch the app as a
// person would (npm start -- --browser --no-open), read its URL line, and
// open it in a fresh Chromium (openBrowserModeSession). Additive: other e2e
// files use these too.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const resultsDir = path.join(root, 'test-results', 'e2e');

const BROWSERS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/opt/google/chrome/chrome',
];

/** A local Chromium or Chrome (RELAY_LAB_BROWSER overrides), or null. */
export function findBrowser(): string | null {
  const override = process.env.RELAY_LAB_BROWSER;
  if (override) return fs.existsSync(override) ? override : null;
  return BROWSERS.find((p) => fs.existsSync(p)) ?? null;
}

/** Where no browser exists the suite says so and skips; under CI a missing browser is a failure. */
export function browserOrSkip(suite: string): string | null {
  const exe = findBrowser();
  if (exe) return exe;
  const message = `${suite}: no Chromium or Chrome found (set RELAY_LAB_BROWSER); skipping the browser tests`;
  if (process.env.CI === 'true') throw new Error(`${message}: a missing browser fails the run under CI=true`);
  console.warn(`\n*** ${message} ***\n`);
  return null;
}

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function freshProfileDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-e2e-profile-'));
}

export interface LaunchedApp {
  url: string;
  child: ChildProcess;
  output: () => string;
  stop: () => Promise<void>;
}

/** Runs `npm start -- --browser --no-open` and waits for the URL on a line of its own. */
export function launchBrowserMode(timeoutMs: number, extraArgs: string[] = []): Promise<LaunchedApp> {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  const child = spawn('npm', ['start', '--', '--browser', '--no-open', ...extraArgs], {
    cwd: root,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, 8000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`no URL line from npm start within ${timeoutMs} ms; output:\n${out}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /^(http:\/\/127\.0\.0\.1:\d+\/\S*)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child, output: () => out, stop });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited (${code}) before printing a URL; output:\n${out}`));
    });
  });
}

/** Path of an installed Electron binary, or null. */
export function electronBinary(): string | null {
  try {
    const exe = createRequire(path.join(root, 'package.json'))('electron') as unknown;
    return typeof exe === 'string' && fs.existsSync(exe) ? exe : null;
  } catch {
    return null;
  }
}

export interface BrowserModeSessionOptions {
  /** The window size Chromium opens the page at. */
  viewport: { width: number; height: number };
  /** The system theme the page sees (the window's first theme follows it). */
  colorScheme?: 'dark' | 'light';
  /** A traces folder for this run (`--traces-dir`); removed on close. Absent: the app's default. */
  tracesDir?: string;
  /** How long `npm start` may take to print its URL (the first launch may build the window). */
  launchTimeoutMs?: number;
  /** Called with the page before it loads the app (listeners that must see the first load). */
  onPage?: (page: Page) => void;
  /** More flags for `npm start -- --browser --no-open` (e.g. --idle). */
  extraArgs?: string[];
}

export interface BrowserModeSession {
  app: LaunchedApp;
  context: BrowserContext;
  page: Page;
  /** Closes the browser, stops the app, removes the profile and the traces folder. Safe to call twice. */
  close: () => Promise<void>;
}

/**
 * The setup every browser-mode e2e shares: `npm start -- --browser --no-open`, a fresh Chromium
 * profile, one page on the app's URL with page errors logged. A failure part way cleans up what
 * was started before it throws.
 */
export async function openBrowserModeSession(
  exe: string,
  opts: BrowserModeSessionOptions,
): Promise<BrowserModeSession> {
  fs.mkdirSync(resultsDir, { recursive: true });
  let app: LaunchedApp | undefined;
  let context: BrowserContext | undefined;
  const profile = freshProfileDir();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await context?.close().catch(() => {});
    await app?.stop();
    fs.rmSync(profile, { recursive: true, force: true });
    if (opts.tracesDir) fs.rmSync(opts.tracesDir, { recursive: true, force: true });
  };
  try {
    app = await launchBrowserMode(opts.launchTimeoutMs ?? 240_000, [
      ...(opts.tracesDir ? ['--traces-dir', opts.tracesDir] : []),
      ...(opts.extraArgs ?? []),
    ]);
    context = await chromium.launchPersistentContext(profile, {
      executablePath: exe,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: opts.viewport,
      ...(opts.colorScheme ? { colorScheme: opts.colorScheme } : {}),
    });
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (e) => console.error('page error:', e.message));
    opts.onPage?.(page);
    await page.goto(app.url);
    return { app, context, page, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/**
 * Clicks Start; while a session runs Start asks first (Save trace first / Replace / Cancel) and
 * this answers `choice`. Returns whether the question was asked.
 */
export async function clickStart(
  page: Page,
  choice: 'Save trace first, then start' | 'Replace without saving' = 'Replace without saving',
): Promise<boolean> {
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  const ask = page.getByRole('alertdialog', { name: 'A session is running' });
  const asked = await ask
    .waitFor({ timeout: 2_000 })
    .then(() => true)
    .catch(() => false);
  if (asked) {
    await ask.getByRole('button', { name: choice }).click();
    await ask.waitFor({ state: 'detached', timeout: 60_000 });
  }
  return asked;
}

/**
 * A rank chip's accessible name: "rank N: <state>" (TopologyView's rankChipName). The state part
 * changes as the rank does; the prefix finds rank N alone (not rank 1N).
 */
export function rankChip(rank: number): RegExp {
  return new RegExp(`^rank ${rank}: `);
}
