// Runs one chaos case as its own process, `relay-lab run ... --json`: the
// most decoupled entry (the engine and lab may change underneath), and one
// that lets the soak find what a run leaves behind. Every process of the
// run inherits a tag in its environment; after the run ends the process
// table is scanned for the tag (a rank re-parented to init is still found).
import { spawnTied } from '../shell-common/tied-spawn';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunObservation, RunReportView } from './check';

export const CHAOS_TAG_ENV = 'RELAY_LAB_CHAOS_TAG';

/** bin/relay-lab.mjs, found from wherever this module runs (sources or the CLI bundle). */
export function relayLabBin(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    const pkg = path.join(dir, 'package.json');
    if (fs.existsSync(pkg)) {
      try {
        if ((JSON.parse(fs.readFileSync(pkg, 'utf8')) as { name?: string }).name === 'relay-lab')
          return path.join(dir, 'bin', 'relay-lab.mjs');
      } catch {
        // not ours, keep walking up
      }
    }
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  throw new Error('cannot locate bin/relay-lab.mjs');
}

/** Live processes whose environment carries `tag` (Linux /proc; elsewhere none are found). */
export function processesTagged(tag: string): { pid: number; cmd: string }[] {
  const needle = `${CHAOS_TAG_ENV}=${tag}\0`;
  const out: { pid: number; cmd: string }[] = [];
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      const env = fs.readFileSync(`/proc/${e}/environ`, 'latin1');
      if (!env.includes(needle) && !env.endsWith(needle.slice(0, -1))) continue;
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'latin1');
      if (/^\d+ \(.*\) Z /.test(stat)) continue; // a zombie holds no resources and will be reaped
      const cmd = fs.readFileSync(`/proc/${e}/cmdline`, 'latin1').split('\0').join(' ').trim();
      out.push({ pid: Number(e), cmd: cmd.slice(0, 160) });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

export interface RunOptions {
  /** The run's own deadline (`--timeout-ms`), after which it stops and reports. */
  runTimeoutMs: number;
  /** The wall-clock bound of the whole process; past it the run is a hang and is killed. */
  wallMs: number;
  /** How long processes may take to exit after the run's own exit before they count as orphans. */
  graceMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runCase(runArgs: string[], tag: string, opts: RunOptions): Promise<RunObservation> {
  const args = [relayLabBin(), 'run', ...runArgs, '--timeout-ms', String(opts.runTimeoutMs), '--json'];
  const child = spawnTied(process.execPath, args, {
    env: { ...process.env, [CHAOS_TAG_ENV]: tag },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    child.kill('SIGKILL');
  }, opts.wallMs);
  const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    child.on('close', (code, sig) => resolve([code, sig]));
    child.on('error', () => resolve([null, null]));
  });
  clearTimeout(timer);
  // Whatever outlives the run gets a grace period to exit on its own, then is an orphan (and is killed).
  const graceEnd = Date.now() + (opts.graceMs ?? 2000);
  let left = processesTagged(tag);
  while (left.length > 0 && Date.now() < graceEnd) {
    await sleep(100);
    left = processesTagged(tag);
  }
  for (const p of left) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  let report: RunReportView | null;
  try {
    report = stdout.trim() ? (JSON.parse(stdout) as RunReportView) : null;
  } catch {
    report = null; // a run that died mid-print
  }
  return { report, exitCode, signal, hung, orphans: left, stderrTail: stderr };
}
