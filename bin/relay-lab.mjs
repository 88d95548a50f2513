#!/usr/bin/env node
// The `relay-lab` command. Builds the Node bundles on demand (a fresh clone
// has none), then hands over to the bundled CLI.
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { buildNode, nodeBundlesFresh, nodeOutDir } = await import(
  pathToFileURL(path.join(root, 'scripts', 'build-node.mjs')).href
);
if (!nodeBundlesFresh()) {
  process.stderr.write('relay-lab: building the command line (first run or sources changed)...\n');
  await buildNode({ quiet: true });
}
const { main } = await import(pathToFileURL(path.join(nodeOutDir, 'cli.mjs')).href);
process.exitCode = await main(process.argv.slice(2));
