// `npm run bench:ui -- [--json] ...`: the window benchmark (issue 13). Builds
// the window if its bundle is stale (as `npm start` does), bundles the
// bench's driver and engine process with esbuild, then runs the driver
// (src-main/lab/bench/ui/driver.ts). Never part of `npm test`.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.join(root, 'out', 'node');

const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'start.mjs'), '--build-only'], {
  cwd: root,
  // Build messages go to stderr: stdout carries only the result (use `npm run -s` to drop npm's banner).
  stdio: ['ignore', process.stderr, 'inherit'],
});
if (built.status !== 0) process.exit(built.status ?? 1);

await build({
  entryPoints: {
    'ui-bench': path.join(root, 'src-main/lab/bench/ui/driver.ts'),
    'ui-bench-server': path.join(root, 'src-main/lab/bench/ui/bench-server.ts'),
  },
  outdir: outDir,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  tsconfig: path.join(root, 'tsconfig.json'),
  packages: 'external',
  banner: {
    js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  },
  logLevel: 'error',
});

// `--build-only`: the bundles and nothing else (the records list's end-to-end test runs the bench's engine process).
if (process.argv.includes('--build-only')) process.exit(0);

const { main } = await import(pathToFileURL(path.join(outDir, 'ui-bench.mjs')).href);
process.exitCode = await main(process.argv.slice(2), {
  serverScript: path.join(outDir, 'ui-bench-server.mjs'),
  rendererDir: path.join(root, 'out', 'renderer'),
});
