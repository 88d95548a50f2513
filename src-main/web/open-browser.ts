// Opens the lab's URL in a local Chromium or Chrome, in app mode (a bare
// window, no tabs or address bar), when one is found.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const CANDIDATES: Record<string, string[]> = {
  linux: [
    'chromium',
    'chromium-browser',
    'google-chrome',
    'google-chrome-stable',
    'microsoft-edge',
    'brave-browser',
  ],
  darwin: [
    '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
    '/Applications/Chromium.app/Contents/MacOS/Chromium',
    '/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge',
  ],
  win32: [
    path.join(process.env['PROGRAMFILES'] ?? 'C:\\Program Files', 'Google\\Chrome\\Application\\chrome.exe'),
    path.join(
      process.env['PROGRAMFILES(X86)'] ?? 'C:\\Program Files (x86)',
      'Microsoft\\Edge\\Application\\msedge.exe',
    ),
  ],
};

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const full = path.join(dir, name);
    try {
      fs.accessSync(full, fs.constants.X_OK);
      return full;
    } catch {
      // not here
    }
  }
  return null;
}

/** The first Chromium-family browser on this machine (RELAY_LAB_BROWSER wins), or null. */
export function findChromium(): string | null {
  const override = process.env.RELAY_LAB_BROWSER;
  if (override) return override;
  for (const c of CANDIDATES[process.platform] ?? []) {
    const found = path.isAbsolute(c) ? (fs.existsSync(c) ? c : null) : onPath(c);
    if (found) return found;
  }
  return null;
}

/** How long the launch page stays on disk: the browser reads it once, at start. */
const LAUNCH_PAGE_LIFETIME_MS = 120_000;

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * A page only this user can read that sends the browser on to `url`. The
 * browser is started on this page's file URL rather than on `url`, because a
 * command line is readable by every local user (/proc/PID/cmdline, ps) and
 * `url` carries this launch's token.
 */
export function writeLaunchPage(url: string): { file: string; remove(): void } {
  // mkdtemp makes the folder 0700; the file is 0600 as well.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-launch-'));
  const file = path.join(dir, 'open.html');
  const target = escapeAttribute(url);
  fs.writeFileSync(
    file,
    '<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer">' +
      `<meta http-equiv="refresh" content="0;url=${target}"><title>Relay Lab</title>` +
      `<a href="${target}">Open Relay Lab</a>\n`,
    { mode: 0o600 },
  );
  return { file, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Starts the browser detached; returns what was run, or null when none was found. */
export function openInAppMode(url: string): string | null {
  const exe = findChromium();
  if (!exe) return null;
  // A profile of our own: the lab window does not mix with the person's browsing.
  const profile = path.join(os.homedir(), '.cache', 'relay-lab', 'browser-profile');
  fs.mkdirSync(profile, { recursive: true });
  const launch = writeLaunchPage(url);
  const child = spawn(
    exe,
    [
      `--app=${pathToFileURL(launch.file).toString()}`,
      `--user-data-dir=${profile}`,
      '--no-first-run',
      '--no-default-browser-check',
    ],
    { detached: true, stdio: 'ignore' },
  );
  child.on('error', () => {});
  child.unref();
  setTimeout(launch.remove, LAUNCH_PAGE_LIFETIME_MS).unref();
  process.once('exit', launch.remove);
  return exe;
}
