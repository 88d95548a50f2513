// Bundles the Node entry points (the CLI, the rank process, browser-mode
// server) with esbuild: one file each, so a rank process starts without a
// TypeScript loader. electron-vite builds the Electron main, preload and the
// renderer; this covers everything that runs under plain Node.
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import fs from 'node:fs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const nodeOutDir = path.join(root, 'out', 'node');

export const nodeEntries = {
  cli: 'src-main/cli/main.ts',
  rank: 'src-main/rank/main.ts',
  // Browser mode: the lab session behind HTTP + WebSocket on loopback.
  web: 'src-main/web/main.ts',
  // The tap's decoding, off its forwarding thread (src-main/capture/decode-worker-client.ts).
  'tap-decode-worker': 'src-main/capture/tap-decode-worker.ts',
};

/** Newest modification time (ms) among the sources the Node bundles are made of. */
export function newestSourceMtime() {
  let newest = 0;
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|json)$/.test(entry.name)) newest = Math.max(newest, fs.statSync(full).mtimeMs);
    }
  };
  for (const dir of ['src-main', 'src-shared']) {
    const full = path.join(root, dir);
    if (fs.existsSync(full)) walk(full);
  }
  return newest;
}

/** True when every bundle exists and is newer than every source file. */
export function nodeBundlesFresh() {
  const newest = newestSourceMtime();
  return Object.keys(nodeEntries).every((name) => {
    const file = path.join(nodeOutDir, `${name}.mjs`);
    return fs.existsSync(file) && fs.statSync(file).mtimeMs >= newest;
  });
}

export async function buildNode({ quiet = false } = {}) {
  // Loaded only to build: a launch with fresh bundles (npm start, relay-lab) skips esbuild's ~150 ms load.
  const { build } = await import('esbuild');
  const entryPoints = Object.fromEntries(
    Object.entries(nodeEntries)
      .filter(([, src]) => fs.existsSync(path.join(root, src)))
      .map(([name, src]) => [name, path.join(root, src)]),
  );
  await build({
    entryPoints,
    outdir: nodeOutDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    tsconfig: path.join(root, 'tsconfig.json'),
    // Keep real npm packages external: they are installed, and bundling `ws`
    // would drop its optional native helpers.
    packages: 'external',
    // `require` shim for any CommonJS dependency loaded from ESM output.
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    },
    logLevel: quiet ? 'error' : 'info',
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  await buildNode();
}
