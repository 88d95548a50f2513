// Runs `relay-lab` as its own process, as a user types it (bin/relay-lab.mjs,
// which builds the bundles if they are stale), for the tests that check a
// command's output and exit code. Child processes start faster without an
// extra CA bundle, and none of these commands reach the network.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const relayLabBin = path.join(repoRoot, 'bin', 'relay-lab.mjs');

export interface CliRun {
  code: number | null;
  out: string;
  err: string;
}

/** Starts `relay-lab ARGS`; `done` resolves with its exit code and everything it printed. */
export function startRelayLab(args: readonly string[]): { child: ChildProcess; done: Promise<CliRun> } {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  const child = spawn(process.execPath, [relayLabBin, ...args], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const done = new Promise<CliRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
  return { child, done };
}

/** Runs `relay-lab ARGS` to its end. */
export function relayLab(args: readonly string[]): Promise<CliRun> {
  return startRelayLab(args).done;
}
