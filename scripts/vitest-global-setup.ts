// Integration tests spawn real rank processes from the bundled entry points:
// build them once before any test runs.
// @ts-expect-error plain ESM script without types
import { buildNode } from './build-node.mjs';

export default async function setup(): Promise<void> {
  await buildNode({ quiet: true });
}
