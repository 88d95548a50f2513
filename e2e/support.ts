// Helpers for the end-to-end tests: find a browser, launch the app as a
// person would (npm start -- --browser --no-open), read its URL line.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

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
