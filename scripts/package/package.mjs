// `npm run package`: a packaged Relay Lab for this platform in
// dist/relay-lab-PLATFORM-ARCH/: Electron's own distribution, the app in
// resources/app.asar (the built main, preload, renderer, the rank entry and
// the runtime dependencies), then the fuses (fuses.mjs) burnt into the
// binary. Needs the Electron binary (the optional `electron` package
// downloads it on install); without it, one plain line and exit 1.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyFuses, PackagingError } from './fuses.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(path.join(root, 'package.json'));

/** Electron's distribution folder and its executable's name there, or a PackagingError. */
function electronDist() {
  let exe;
  try {
    exe = require('electron');
  } catch {
    throw new PackagingError(
      'the electron package is not installed (an optional dependency): packaging needs its binary',
    );
  }
  if (typeof exe !== 'string' || !fs.existsSync(exe))
    throw new PackagingError(
      'the Electron binary is not installed (the electron package downloads it on install): packaging needs it',
    );
  const app = /^(.*\.app)\//.exec(exe)?.[1];
  return app
    ? { dir: path.dirname(app), exe: path.basename(app) }
    : { dir: path.dirname(exe), exe: path.basename(exe) };
}

function stageApp(stage) {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  fs.rmSync(stage, { recursive: true, force: true });
  fs.mkdirSync(stage, { recursive: true });
  fs.writeFileSync(
    path.join(stage, 'package.json'),
    JSON.stringify(
      {
        name: pkg.name,
        version: pkg.version,
        type: pkg.type,
        main: pkg.main,
        dependencies: pkg.dependencies,
      },
      null,
      2,
    ),
  );
  for (const dir of ['out/main', 'out/preload', 'out/renderer'])
    fs.cpSync(path.join(root, dir), path.join(stage, dir), { recursive: true, dereference: true });
  fs.mkdirSync(path.join(stage, 'out/node'), { recursive: true });
  fs.copyFileSync(path.join(root, 'out/node/rank.mjs'), path.join(stage, 'out/node/rank.mjs'));
  for (const dep of Object.keys(pkg.dependencies ?? {}))
    fs.cpSync(path.join(root, 'node_modules', dep), path.join(stage, 'node_modules', dep), {
      recursive: true,
      dereference: true,
    });
}

/** macOS checks app.asar against the hash of its header recorded in Info.plist. */
function recordAsarIntegrity(appDir, asarFile, headerString) {
  const plist = path.join(appDir, 'Contents', 'Info.plist');
  if (!fs.existsSync(plist)) return;
  const hash = createHash('sha256').update(headerString).digest('hex');
  const entry =
    '<key>ElectronAsarIntegrity</key><dict><key>Resources/app.asar</key><dict>' +
    `<key>algorithm</key><string>SHA256</string><key>hash</key><string>${hash}</string></dict></dict>`;
  const text = fs.readFileSync(plist, 'utf8');
  fs.writeFileSync(plist, text.replace(/<\/dict>\s*<\/plist>\s*$/, `${entry}</dict></plist>\n`));
}

async function main() {
  const { dir, exe } = electronDist();
  const built = spawnSync(process.execPath, [path.join(root, 'scripts/start.mjs'), '--build-only'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (built.status !== 0) throw new PackagingError('the build failed (see above)');
  let asar;
  try {
    asar = require('@electron/asar');
  } catch {
    throw new PackagingError('@electron/asar is not installed: packaging needs it');
  }
  const out = path.join(root, 'dist', `relay-lab-${process.platform}-${process.arch}`);
  const stage = path.join(root, 'dist', '.stage');
  stageApp(stage);
  fs.rmSync(out, { recursive: true, force: true });
  fs.cpSync(dir, out, { recursive: true, verbatimSymlinks: true });
  const isMac = exe.endsWith('.app');
  const resources = isMac ? path.join(out, exe, 'Contents', 'Resources') : path.join(out, 'resources');
  fs.rmSync(path.join(resources, 'default_app.asar'), { force: true });
  const asarFile = path.join(resources, 'app.asar');
  await asar.createPackage(stage, asarFile);
  fs.rmSync(stage, { recursive: true, force: true });
  if (isMac) recordAsarIntegrity(path.join(out, exe), asarFile, asar.getRawHeader(asarFile).headerString);
  // Windows keeps the asar header hash as a resource of the executable: a
  // step for a resource editor there (rcedit), not done here.
  let binary = path.join(out, exe);
  if (!isMac) {
    const renamed = path.join(out, exe.replace(/^electron/, 'relay-lab'));
    fs.renameSync(binary, renamed);
    binary = renamed;
  }
  const set = await applyFuses(binary);
  process.stdout.write(`relay-lab package: ${binary}\n`);
  for (const [name, on] of Object.entries(set)) process.stdout.write(`  ${name}: ${on ? 'on' : 'off'}\n`);
}

try {
  await main();
} catch (e) {
  if (!(e instanceof PackagingError)) throw e;
  process.stderr.write(`relay-lab package: ${e.message}\n`);
  process.exit(1);
}
