// Runs the system's tshark for the trace tests. Missing tshark is a visible
// skip on a developer's machine and a failure under CI (CI=true), whose
// .ci/run installs it.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const DISSECTOR = fileURLToPath(new URL('../../../../wireshark/relay_lab.lua', import.meta.url));

export function tsharkAvailable(): boolean {
  const r = spawnSync('tshark', ['--version'], { stdio: 'ignore' });
  return r.status === 0;
}

export const TSHARK_REQUIRED = process.env.CI === 'true';

// A fresh home and config folder: a relay_lab.lua already installed in the
// user's plugins would otherwise register the protocol twice.
const home = mkdtempSync(join(tmpdir(), 'relay-lab-tshark-home-'));
const env = { ...process.env, HOME: home, WIRESHARK_CONFIG_DIR: home, XDG_CONFIG_HOME: home };

export function writeTemp(name: string, bytes: Uint8Array): string {
  const dir = mkdtempSync(join(tmpdir(), 'relay-lab-tshark-'));
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

export type TsharkLayers = Record<string, string[]>;

/** `tshark -r file -T json -e ...`: one layers object per packet shown. */
export function tsharkFields(
  file: string,
  fields: string[],
  extra: string[] = [],
  withDissector = true,
): TsharkLayers[] {
  const args = [
    '-r',
    file,
    ...(withDissector ? ['-X', `lua_script:${DISSECTOR}`] : []),
    ...extra,
    '-T',
    'json',
    ...fields.flatMap((f) => ['-e', f]),
  ];
  const out = execFileSync('tshark', args, {
    env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const docs = JSON.parse(out) as { _source: { layers: TsharkLayers } }[];
  return docs.map((d) => d._source.layers);
}

/** tshark's stderr when run with the dissector (Lua errors land there). */
export function tsharkStderr(file: string): string {
  const r = spawnSync('tshark', ['-r', file, '-X', `lua_script:${DISSECTOR}`], { env, encoding: 'utf8' });
  return r.stderr.replace(/^Running as user "root".*\n/m, '');
}

/** `tshark -r file args -T fields -e field` lines, read even from a file still being written (tshark then exits non-zero). */
export function tsharkFieldLines(file: string, field: string, extra: string[] = []): string[] {
  const r = spawnSync('tshark', ['-r', file, ...extra, '-T', 'fields', '-e', field], {
    env,
    encoding: 'utf8',
  });
  return r.stdout.split('\n').filter((l) => l.trim() !== '');
}
