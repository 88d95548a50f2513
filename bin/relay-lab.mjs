#!/usr/bin/env node
// The `relay-lab` command. Builds the Node bundles on demand (a fresh clone
// has none), then hands over to the bundled CLI.
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// As `npm start` does (scripts/start.mjs): when what started this command is
// gone (its parent, and under npm or npx every process up to npm itself, which
// a SIGKILL leaves the rest of running), this process ends, and its ranks and
// helpers with it (each started under a parent-death signal, or watching its
// parent as this one does). Before the build, so a build dies too.
const { watchLaunchers } = await import(pathToFileURL(path.join(root, 'scripts', 'lifeline.mjs')).href);
watchLaunchers(() => {
  process.stderr.write('relay-lab: the command that started it is gone; stopping.\n');
  process.exit(1);
});
const { buildNode, nodeBundlesFresh, nodeOutDir } = await import(
  pathToFileURL(path.join(root, 'scripts', 'build-node.mjs')).href
);
if (!nodeBundlesFresh()) {
  process.stderr.write('relay-lab: building the command line (first run or sources changed)...\n');
  await buildNode({ quiet: true });
}
const { main } = await import(pathToFileURL(path.join(nodeOutDir, 'cli.mjs')).href);
process.exitCode = await main(process.argv.slice(2));
