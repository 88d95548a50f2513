// relay-lab slurm: a topology as a Slurm job (one task per host). `script`
// prints the batch script, `submit` hands it to sbatch (and with --wait
// follows the job to its end and prints the run's report), `task` is what
// each of the job's tasks runs (src-main/slurm/task.ts).
import fs from 'node:fs';
import path from 'node:path';
import { batchScript } from '@shared/slurm/batch-script';
import type { ResolvedTopology } from '@shared/lab/topology-config';
import type { Fault } from '../../lab/round-driver';
import type { RunReport } from '../../lab/run-topology';
import { packageRoot } from '../../engine/rank-process';
import { jobReport } from '../../slurm/job-report';
import { sbatch, waitJob } from '../../slurm/job';
import { REPORT_FILE, runSlurmTask } from '../../slurm/task';
import { startOneNodeCluster } from '../../slurm/one-node-cluster';
import { printJson, UsageError } from '../args';
import { runCommand } from './run';
import type { Command } from './types';

const USAGE = `usage: relay-lab slurm script|submit [--out DIR] [--job-name NAME] [--partition P] [--account A]
  [--time T] [--nodes N] [--ntasks-per-node N] [--sbatch-arg ARG]... [--salt-file FILE]
  [--watch ADDR[:PORT]] [--no-remote-legs] [RUN FLAGS]
  relay-lab slurm submit ... [--wait] [--json]
  relay-lab slurm one-node   (root: a one-node Slurm cluster in a temp folder until Ctrl-C, to try it here)
RUN FLAGS are relay-lab run's (--hosts, --ranks-per-host, --topology, --rounds, --model-bytes, --mode,
--kill-rank, --pause-rank, --kill-host, --link-fault, ...): one Slurm task per host.
script prints the batch script; submit writes it to DIR/job.sh and runs sbatch. The job writes its salt
(mode 600), report.json and trace.ndjson to DIR, which every node must see (a shared filesystem).
--wait follows the job to its end and prints the run's report (as relay-lab run --json with --json),
with the job's id and final state; a cancelled, timed-out or failed job never reads as ok.
The job's first task serves a watch server for the window (npm start -- --attach HOST:PORT --token T),
on 127.0.0.1 and a free port unless --watch names ADDR[:PORT]; DIR/watch.json (mode 600) has both.
The trace and the window hold every host's loopback legs (rank <-> relay), sent by each host's agent;
--no-remote-legs keeps those of hosts h1.. on their nodes (only h0's legs and the uplinks are seen).`;

/** --watch ADDR[:PORT] (a port alone is on 127.0.0.1). */
function watchFlag(v: string | undefined): { host: string; port: number } | undefined {
  if (v === undefined) return undefined;
  const m = /^(?:([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\]):)?(\d{1,5})$/.exec(v) ?? /^([A-Za-z0-9.-]+)$/.exec(v);
  if (!m) throw new UsageError(`--watch must be ADDR[:PORT] or PORT, got '${v}'`);
  const port = m[2] === undefined ? 0 : Number(m[2]);
  if (port > 65535) throw new UsageError(`--watch: port ${port} is out of range (0-65535)`);
  return { host: (m[1] ?? '127.0.0.1').replace(/^\[|\]$/g, ''), port };
}

const VALUE_FLAGS = [
  'out',
  'job-name',
  'partition',
  'account',
  'time',
  'nodes',
  'ntasks-per-node',
  'sbatch-arg',
  'salt-file',
  'watch',
] as const;
const BOOL_FLAGS = ['wait', 'json', 'help', 'no-remote-legs'] as const;
/** Flags of `run` a job sets itself. */
const JOB_OWNED: Record<string, string> = {
  salt: 'the job makes its own salt in DIR/salt (or give --salt-file FILE, mode 600)',
  trace: 'the job writes DIR/trace.ndjson',
  json: 'the job writes DIR/report.json (and submit --wait --json prints it)',
  'save-repro': 'not in a job yet: save a reproduction from a local run',
};

interface SlurmArgs {
  values: Record<string, string[]>;
  bools: Set<string>;
  runFlags: string[];
}

/** Splits the job's own flags from run's, which run's parser then checks. */
function splitArgs(argv: string[]): SlurmArgs {
  const values: Record<string, string[]> = {};
  const bools = new Set<string>();
  const runFlags: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i];
    const m = /^--([\w-]+)(?:=(.*))?$/.exec(tok);
    const name = m?.[1];
    if (name && (VALUE_FLAGS as readonly string[]).includes(name)) {
      const v = m![2] ?? argv[++i];
      if (v === undefined) throw new UsageError(`--${name} needs a value`);
      (values[name] ??= []).push(v);
    } else if (name && (BOOL_FLAGS as readonly string[]).includes(name) && m![2] === undefined) {
      bools.add(name);
    } else {
      if (name && name in JOB_OWNED) throw new UsageError(`--${name}: ${JOB_OWNED[name]}`);
      runFlags.push(tok);
    }
  }
  return { values, bools, runFlags };
}

function one(a: SlurmArgs, name: string): string | undefined {
  const v = a.values[name];
  if (v && v.length > 1) throw new UsageError(`--${name} given ${v.length} times`);
  return v?.[0];
}

/** sbatch options as #SBATCH lines take them. */
function sbatchOptions(a: SlurmArgs): string[] {
  const out: string[] = [];
  const simple: [string, RegExp, string][] = [
    ['partition', /^[\w.,-]+$/, 'a partition name'],
    ['account', /^[\w.-]+$/, 'an account name'],
    ['time', /^[\d:-]+$/, 'a time such as 30, 1:00:00 or 1-00:00:00'],
    ['nodes', /^\d+(-\d+)?$/, 'a node count such as 2 or 2-4'],
    ['ntasks-per-node', /^\d+$/, 'a whole number'],
  ];
  for (const [name, re, what] of simple) {
    const v = one(a, name);
    if (v === undefined) continue;
    if (!re.test(v)) throw new UsageError(`--${name} must be ${what}, got '${v}'`);
    out.push(`--${name}=${v}`);
  }
  for (const v of a.values['sbatch-arg'] ?? []) {
    if (!/^--?[A-Za-z]/.test(v) || /[\n\r]/.test(v))
      throw new UsageError(`--sbatch-arg must be one sbatch option, got '${v}'`);
    out.push(v);
  }
  return out;
}

/** Checks the run flags with run's own parser (nothing starts) and returns the topology and schedule. */
async function checkRunFlags(runFlags: string[]): Promise<{ resolved: ResolvedTopology; schedule: Fault[] }> {
  let got: { resolved: ResolvedTopology; schedule: Fault[] } | null = null;
  // A stand-in salt for the check only: the job makes its own.
  await runCommand.run([...runFlags, '--salt', '00'.repeat(16)], {
    validated: (resolved, schedule) => {
      got = { resolved, schedule };
      return 'stop';
    },
  });
  if (!got) throw new UsageError('the run flags were not accepted');
  return got;
}

function defaultOut(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return path.resolve(`relay-lab-job-${stamp}`);
}

async function scriptFor(a: SlurmArgs) {
  const { resolved, schedule } = await checkRunFlags(a.runFlags);
  const out = path.resolve(one(a, 'out') ?? defaultOut());
  const saltFile = one(a, 'salt-file');
  const watch = one(a, 'watch');
  watchFlag(watch);
  const c = resolved.config;
  const text = batchScript({
    jobName: one(a, 'job-name') ?? 'relay-lab',
    hosts: c.ranksPerHost.length,
    out,
    sbatch: sbatchOptions(a),
    relayLab: [process.execPath, path.join(packageRoot(), 'bin', 'relay-lab.mjs')],
    runFlags: a.runFlags,
    saltFile: saltFile === undefined ? undefined : path.resolve(saltFile),
    watch,
    remoteLegs: !a.bools.has('no-remote-legs'),
    describe: `${c.ranksPerHost.length} hosts (${c.ranksPerHost.join(',')} ranks), ${c.mode}, ${c.modelBytes} B ${c.dtype}, ${c.rounds} rounds`,
  });
  return { text, out, resolved, schedule };
}

async function submit(a: SlurmArgs): Promise<number> {
  const { text, out, resolved, schedule } = await scriptFor(a);
  if (fs.existsSync(out) && (!fs.statSync(out).isDirectory() || fs.readdirSync(out).length > 0))
    throw new UsageError(`--out ${out} exists and is not an empty folder: a job never writes over files`);
  fs.mkdirSync(out, { recursive: true, mode: 0o700 });
  const script = path.join(out, 'job.sh');
  fs.writeFileSync(script, text, { mode: 0o700 });
  const id = await sbatch(script);
  fs.writeFileSync(
    path.join(out, 'job.json'),
    JSON.stringify({ id, submitted: new Date().toISOString() }) + '\n',
  );
  process.stderr.write(`relay-lab slurm: job ${id} submitted; its folder is ${out}\n`);
  if (!a.bools.has('wait')) {
    if (a.bools.has('json')) printJson({ jobId: id, out, script });
    return 0;
  }
  const onInterrupt = () => {
    process.stderr.write(
      `\nrelay-lab slurm: job ${id} goes on without this command; scancel ${id} ends it\n`,
    );
    process.exit(130);
  };
  process.once('SIGINT', onInterrupt);
  const status = await waitJob(id, (s) =>
    process.stderr.write(
      `relay-lab slurm: job ${id} ${s.state}${s.nodes && s.nodes !== '(null)' ? ` on ${s.nodes}` : ''}\n`,
    ),
  );
  process.off('SIGINT', onInterrupt);
  let written: RunReport | null;
  try {
    written = JSON.parse(fs.readFileSync(path.join(out, REPORT_FILE), 'utf8')) as RunReport;
  } catch {
    // The job ended before its first task wrote a report (cancelled early, failed to start).
    written = null;
  }
  const report = jobReport(written, status, { id, out }, resolved, schedule);
  fs.writeFileSync(path.join(out, 'job-report.json'), JSON.stringify(report, null, 2) + '\n', {
    mode: 0o600,
  });
  if (a.bools.has('json')) printJson(report);
  else
    process.stdout.write(
      `job ${id} ${status.state}: ${report.roundsCompleted}/${report.roundsRequested} rounds, dead [${report.dead.join(', ')}], verdict ${report.verdict} (${report.ended})\n`,
    );
  return report.verdict === 'ok' && status.state === 'COMPLETED' ? 0 : 1;
}

async function task(argv: string[]): Promise<number> {
  const dash = argv.indexOf('--');
  const own = dash < 0 ? argv : argv.slice(0, dash);
  const runFlags = dash < 0 ? [] : argv.slice(dash + 1);
  const a = splitArgs(own);
  const out = one(a, 'out');
  const saltFile = one(a, 'salt-file');
  if (!out || !saltFile) throw new UsageError('slurm task --out DIR --salt-file FILE -- RUN FLAGS');
  return runSlurmTask({
    out: path.resolve(out),
    saltFile,
    runFlags,
    watch: watchFlag(one(a, 'watch')),
    remoteLegs: !a.bools.has('no-remote-legs'),
  });
}

/** A one-node cluster for trying `slurm submit` on one machine: up until Ctrl-C, then gone. */
async function oneNode(): Promise<number> {
  const cluster = await startOneNodeCluster();
  process.stdout.write(
    `one-node Slurm cluster up (node ${cluster.node}, folder ${cluster.dir}); in another shell:\n` +
      `  export SLURM_CONF=${cluster.env.SLURM_CONF}\n  sinfo\n  npx relay-lab slurm submit --hosts 2 --ranks-per-host 2 --wait --json\n` +
      'Ctrl-C stops it.\n',
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
    process.once('SIGHUP', () => resolve());
  });
  await cluster.stop();
  process.stderr.write('one-node Slurm cluster stopped\n');
  return 0;
}

export const slurmCommand: Command = {
  summary: 'run a topology as a Slurm job: print its batch script, submit it, follow it',
  async run(argv) {
    const [sub, ...rest] = argv;
    if (!sub || sub === '--help' || sub === '-h') {
      (sub ? process.stdout : process.stderr).write(USAGE + '\n');
      return sub ? 0 : 2;
    }
    if (sub === 'task') return task(rest);
    if (sub === 'one-node') return oneNode();
    if (sub !== 'script' && sub !== 'submit')
      throw new UsageError(`unknown subcommand '${sub}' (script, submit)`);
    const a = splitArgs(rest);
    if (a.bools.has('help')) {
      process.stdout.write(USAGE + '\n');
      return 0;
    }
    if (sub === 'script') {
      process.stdout.write((await scriptFor(a)).text);
      return 0;
    }
    return submit(a);
  },
};
