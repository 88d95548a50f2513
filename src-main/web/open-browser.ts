// Opens the lab's URL in a local Chromium or Chrome, in app mode (a bare
// window, no tabs or address bar), when one is found, and says what happened:
// a window opened, or why none did.
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

/** How long a browser that is starting may take to fail before we call its window open. */
export const OPEN_SETTLE_MS = 3000;

/** What happened when the lab tried to open its window: the launch reports only this. */
export type OpenOutcome =
  /** No Chromium-family browser on this machine. */
  | { kind: 'no-browser' }
  /** Linux with neither DISPLAY nor WAYLAND_DISPLAY: no browser window can appear, so none was started. */
  | { kind: 'no-display'; exe: string }
  /** The browser exited with an error before it could show a window. */
  | { kind: 'failed'; exe: string; detail: string }
  /** The browser handed the URL to a copy of itself already running with this profile, and exited. */
  | { kind: 'handed-off'; exe: string }
  /** The browser was still running after OPEN_SETTLE_MS: its window is open. */
  | { kind: 'opened'; exe: string };

/** One line for the terminal that says what happened, and what to do when no window opened. */
export function describeOpen(outcome: OpenOutcome): string {
  const name = 'exe' in outcome ? path.basename(outcome.exe) : '';
  switch (outcome.kind) {
    case 'no-browser':
      return 'No Chromium or Chrome found: open the URL above in a browser.';
    case 'no-display':
      return 'No display here (DISPLAY and WAYLAND_DISPLAY are unset), so no window was opened: open the URL above in a browser.';
    case 'failed':
      return `${name} could not open a window (${outcome.detail}): open the URL above in a browser.`;
    case 'handed-off':
      return `Sent the URL to the ${name} already running (app mode).`;
    case 'opened':
      return `Opened in ${name} (app mode).`;
  }
}

const SETPRIV = '/usr/bin/setpriv';

/**
 * The command that runs `cmd` so that it dies with this process: on Linux
 * under `setpriv --pdeathsig` (the kernel signals it when this process ends,
 * however it ends); elsewhere as it is.
 */
export function tiedCommand(cmd: string, args: string[], signal: 'TERM' | 'KILL'): [string, string[]] {
  if (process.platform === 'linux' && fs.existsSync(SETPRIV))
    return [SETPRIV, ['--pdeathsig', signal, '--', cmd, ...args]];
  return [cmd, args];
}
function lastErrorLine(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.replace(/^\[[^\]]*\]\s*/, '').trim())
    .filter(Boolean);
  return (lines[lines.length - 1] ?? '').slice(0, 200);
}

/**
 * Starts the browser on the URL in app mode and reports what happened. The
 * browser is this process's child and closes when the lab ends (a window on
 * a lab that is gone only shows an error): SIGTERM from the kernel on Linux
 * when this process dies, however it dies.
 */
export async function openInAppMode(
  url: string,
  opts: { env?: NodeJS.ProcessEnv; settleMs?: number } = {},
): Promise<OpenOutcome> {
  const env = opts.env ?? process.env;
  const exe = findChromium();
  if (!exe) return { kind: 'no-browser' };
  if (process.platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY)
    return { kind: 'no-display', exe };
  // A profile of our own: the lab window does not mix with the person's browsing.
  const profile = path.join(os.homedir(), '.cache', 'relay-lab', 'browser-profile');
  fs.mkdirSync(profile, { recursive: true });
  const launch = writeLaunchPage(url);
  const [cmd, args] = tiedCommand(
    exe,
    [
      `--app=${pathToFileURL(launch.file).toString()}`,
      `--user-data-dir=${profile}`,
      '--no-first-run',
      '--no-default-browser-check',
    ],
    'TERM',
  );
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
  setTimeout(launch.remove, LAUNCH_PAGE_LIFETIME_MS).unref();
  process.once('exit', launch.remove);
  // Keep the last few KiB of what it says, for the reason it gives if it fails.
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (s: string) => {
    stderr = (stderr + s).slice(-4096);
  });
  const outcome = await new Promise<OpenOutcome>((resolve) => {
    const timer = setTimeout(() => resolve({ kind: 'opened', exe }), opts.settleMs ?? OPEN_SETTLE_MS);
    child.once('error', (e) => {
      clearTimeout(timer);
      resolve({ kind: 'failed', exe, detail: e.message });
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve({ kind: 'handed-off', exe });
      const why = lastErrorLine(stderr);
      resolve({
        kind: 'failed',
        exe,
        detail: `${signal ? `signal ${signal}` : `exit code ${code}`}${why ? `: ${why}` : ''}`,
      });
    });
  });
  // The browser lives on with the lab; it must not keep this process alive on its own.
  child.unref();
  (child.stderr as (NodeJS.ReadableStream & { unref?: () => void }) | null)?.unref?.();
  return outcome;
}
