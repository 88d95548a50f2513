// `npm start`: build what is missing, then launch the Electron shell. Where
// the Electron binary is missing or cannot start, say so in one line and run
// browser mode instead. `npm start -- --browser` asks for browser mode;
// `--no-open` keeps browser mode from opening a window; `--build-only` builds
// and exits. Nothing it starts outlives it (scripts/lifeline.mjs), and it
// does not outlive `npm start`.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildNode, nodeBundlesFresh, nodeOutDir } from './build-node.mjs';
import { spawnTied, watchLaunchers } from './lifeline.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const wantBrowser = args.includes('--browser');
// --build-only: build what is missing and exit (the Electron end-to-end test uses it).
const buildOnly = args.includes('--build-only');
// `--trace FILE` (open a saved trace at launch) and `--traces-dir DIR` (where
// saves go, default ~/relay-lab-traces) name paths as the person typed them:
// npm runs this script from the package root, so resolve them against the
// folder `npm start` was typed in (INIT_CWD) before passing them on.
const typedIn = process.env.INIT_CWD ?? process.cwd();
const passOn = args
  .filter((a) => a !== '--browser' && a !== '--build-only')
  .map((a, i, all) =>
    (all[i - 1] === '--trace' || all[i - 1] === '--traces-dir') && !a.startsWith('--')
      ? path.resolve(typedIn, a)
      : a,
  );

// Children start faster without an extra CA bundle; nothing they do needs it.
const childEnv = { ...process.env };
delete childEnv.NODE_EXTRA_CA_CERTS;

function newestMtime(dirs, pattern) {
  let newest = 0;
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (pattern.test(e.name)) newest = Math.max(newest, fs.statSync(full).mtimeMs);
    }
  };
  for (const d of dirs) if (fs.existsSync(path.join(root, d))) walk(path.join(root, d));
  return newest;
}

/** The renderer, main and preload bundles exist and are newer than their sources. */
function appBuildFresh() {
  const outputs = ['out/renderer/index.html', 'out/main/index.js', 'out/preload/index.cjs'].map((p) =>
    path.join(root, p),
  );
  if (!outputs.every((p) => fs.existsSync(p))) return false;
  const built = Math.min(...outputs.map((p) => fs.statSync(p).mtimeMs));
  return (
    built >=
    newestMtime(
      ['src-renderer', 'src-shared', 'src-main/electron', 'src-main/lab', 'src-main/engine'],
      /\.(tsx?|css|html)$/,
    )
  );
}

function buildApp() {
  process.stdout.write('relay-lab: building the window (electron-vite build)…\n');
  const bin = path.join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js');
  // electron-vite reads Electron's major version from the installed package to
  // pick build targets; where the optional package is absent, take it from the pin.
  const env = { ...childEnv };
  if (!env.ELECTRON_MAJOR_VER) {
    const pin =
      JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).optionalDependencies?.electron ??
      '';
    const major = /^\D*(\d+)/.exec(pin)?.[1];
    if (major) env.ELECTRON_MAJOR_VER = major;
  }
  const r = spawnSync(process.execPath, [bin, 'build', '--logLevel', 'warn'], {
    cwd: root,
    stdio: 'inherit',
    env,
  });
  if (r.status !== 0) {
    process.stderr.write('relay-lab: the window build failed (see above).\n');
    process.exit(1);
  }
}

/** Path to the Electron binary, or a reason it is not usable. */
function electronBinary() {
  try {
    const require = createRequire(path.join(root, 'package.json'));
    const exe = require('electron');
    if (typeof exe !== 'string' || !fs.existsSync(exe))
      return { reason: 'the Electron binary is not installed' };
    return { exe };
  } catch {
    return { reason: 'the Electron package is not installed (it is an optional dependency)' };
  }
}

function runChild(cmd, cmdArgs, env = childEnv) {
  const child = spawnTied(cmd, cmdArgs, { cwd: root, stdio: 'inherit', env });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  return child;
}

// `kill -9` of `npm start` leaves this script to init (npm's `sh -c` too):
// end then, and the kernel and the lifelines end everything below.
watchLaunchers(() => {
  process.stderr.write('relay-lab: the command that started the lab is gone; stopping the lab.\n');
  process.exit(1);
});

function startBrowserMode() {
  const child = runChild(process.execPath, [path.join(nodeOutDir, 'web.mjs'), ...passOn]);
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

/**
 * Builds run under a lock file: two launches at once (tests run in parallel)
 * must not both rewrite out/renderer while one of them is serving it.
 */
async function withBuildLock(fn) {
  const lock = path.join(root, 'out', '.start-build.lock');
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  for (;;) {
    try {
      fs.closeSync(fs.openSync(lock, 'wx'));
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      // A lock left by a launch that died mid-build goes stale after two minutes.
      try {
        if (Date.now() - fs.statSync(lock).mtimeMs > 120_000) fs.rmSync(lock, { force: true });
      } catch {
        // removed meanwhile
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    await fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

if (!nodeBundlesFresh() || !appBuildFresh()) {
  await withBuildLock(async () => {
    // Re-check under the lock: another launch may have just built.
    if (!nodeBundlesFresh()) await buildNode({ quiet: true });
    if (!appBuildFresh()) buildApp();
  });
}

if (buildOnly) {
  process.exit(0);
} else if (wantBrowser) {
  startBrowserMode();
} else {
  const { exe, reason } = electronBinary();
  // Linux without a display: no Electron window can appear. Say so instead of starting one that
  // fails (or, under some setups, lingers without a window) and reporting a window that never was.
  const noDisplay = process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY;
  if (exe && noDisplay) {
    process.stdout.write(
      'relay-lab: no display (DISPLAY and WAYLAND_DISPLAY are unset), so no Electron window can open; starting browser mode instead.\n',
    );
    startBrowserMode();
  } else if (!exe) {
    process.stdout.write(`relay-lab: ${reason}; starting browser mode instead.\n`);
    startBrowserMode();
  } else {
    const started = Date.now();
    const env = { ...childEnv };
    delete env.ELECTRON_RUN_AS_NODE;
    const child = runChild(exe, [path.join(root, 'out/main/index.js'), ...passOn], env);
    let fellBack = false;
    const fallBack = (why) => {
      if (fellBack) return;
      fellBack = true;
      process.stdout.write(`relay-lab: Electron could not start (${why}); starting browser mode instead.\n`);
      startBrowserMode();
    };
    child.on('error', (e) => fallBack(e.message));
    child.on('exit', (code, signal) => {
      // A quick failing exit (no display, missing libraries) means Electron cannot run here.
      if (code !== 0 && Date.now() - started < 5000)
        fallBack(signal ? `signal ${signal}` : `exit code ${code}`);
      else if (!fellBack) process.exit(code ?? 0);
    });
  }
}
