// One task of a Relay Lab Slurm job (`relay-lab slurm task`, started by the
// batch script's srun). Task 0 runs the engine: the controller and the
// coordinator, host h0, the round driver, faults and the report, exactly as
// `relay-lab run` does, with every other host remote; it publishes where its
// host agents find it in the job folder. Task N (N > 0) is host hN's agent.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseSessionSalt } from '@shared/lab/session-salt';
import { runCommand } from '../cli/commands/run';
import { UsageError } from '../cli/args';
import type { TopologySession } from '../lab/topology-session';
import { runHostAgent } from './host-agent';
import { RemoteHosts, type Rendezvous } from './remote-hosts';
import { readSaltFile, writePrivateFile } from './files';
import { JobWatch } from './job-watch';

export const ENGINE_FILE = 'engine.json';
export const REPORT_FILE = 'report.json';
export const TRACE_FILE = 'trace.ndjson';
export const WATCH_FILE = 'watch.json';
const JOIN_MS = 120_000;

interface EngineFile extends Rendezvous {
  jobId: string;
}

export interface SlurmTaskOptions {
  out: string;
  saltFile: string;
  runFlags: string[];
  env?: NodeJS.ProcessEnv;
  /** Where the watch server listens: ADDR[:PORT] (default 127.0.0.1, a free port). */
  watch?: { host: string; port: number };
  /** The remote hosts' loopback legs into the job's tap, trace and window (default true). */
  remoteLegs?: boolean;
}

function taskIndex(env: NodeJS.ProcessEnv): { task: number; tasks: number; jobId: string } {
  const task = Number(env.SLURM_PROCID);
  const tasks = Number(env.SLURM_STEP_NUM_TASKS ?? env.SLURM_NTASKS ?? env.SLURM_NPROCS);
  if (!Number.isInteger(task) || !Number.isInteger(tasks) || tasks < 1)
    throw new UsageError(
      'slurm task runs inside a Slurm step (srun): SLURM_PROCID and SLURM_NTASKS are not set',
    );
  return { task, tasks, jobId: env.SLURM_JOB_ID ?? 'none' };
}

async function readEngineFile(file: string, jobId: string): Promise<Rendezvous> {
  const end = Date.now() + JOIN_MS;
  for (;;) {
    try {
      const e = JSON.parse(fs.readFileSync(file, 'utf8')) as EngineFile;
      // A file left by an earlier job in the same folder is not this job's engine.
      if (e.jobId === jobId && typeof e.address === 'string' && Number.isInteger(e.port)) return e;
    } catch {
      // not written yet
    }
    if (Date.now() > end)
      throw new Error(`ENGINE_MISSING: task 0 published no engine in ${file} within ${JOIN_MS} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function runSlurmTask(opts: SlurmTaskOptions): Promise<number> {
  const env = opts.env ?? process.env;
  const { task, tasks, jobId } = taskIndex(env);
  const salt = parseSessionSalt(readSaltFile(opts.saltFile), 'salt file');
  const say = (l: string) => process.stderr.write(`task ${task} (h${task}): ${l}\n`);
  if (task > 0) {
    const engine = await readEngineFile(path.join(opts.out, ENGINE_FILE), jobId);
    say(`joining the engine at ${engine.address}:${engine.port}`);
    return runHostAgent({ host: task, salt: salt.bytes, engine, log: say });
  }

  const hosts = Array.from({ length: tasks - 1 }, (_, i) => i + 1);
  const remote = await RemoteHosts.listen({
    salt: salt.bytes,
    hosts,
    advertiseAddress: env.SLURMD_NODENAME ?? os.hostname(),
    onLog: (level, m) => say(`${level}: ${m}`),
    legs: opts.remoteLegs !== false,
  });
  let session: TopologySession | null = null;
  let cancelled = false;
  let watch: JobWatch | null = null;
  // scancel, a time limit or a lost node: end the rounds and still write what was measured.
  const stop = (sig: string) => {
    cancelled = true;
    say(`${sig}: ending the rounds`);
    session?.endRounds();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  try {
    writePrivateFile(
      path.join(opts.out, ENGINE_FILE),
      JSON.stringify({ ...remote.rendezvous(), jobId }) + '\n',
    );
    say(
      `engine on ${remote.rendezvous().address}:${remote.rendezvous().port}, waiting for ${hosts.length} host agent(s)`,
    );
    watch = await JobWatch.start({ out: opts.out, listen: opts.watch });
    const watching = watch;
    const where = `${opts.watch?.host && opts.watch.host !== '0.0.0.0' ? opts.watch.host : (env.SLURMD_NODENAME ?? os.hostname())}:${watch.port}`;
    writePrivateFile(
      path.join(opts.out, WATCH_FILE),
      JSON.stringify({
        address: where,
        listen: opts.watch?.host ?? '127.0.0.1',
        port: watch.port,
        token: watch.token,
        jobId,
      }) + '\n',
    );
    say(`watch server on ${opts.watch?.host ?? '127.0.0.1'}:${watch.port} (token in ${WATCH_FILE})`);
    await remote.waitAll(JOIN_MS);
    return await runCommand.run(
      [...opts.runFlags, '--salt', salt.hex, '--trace', path.join(opts.out, TRACE_FILE)],
      {
        remote,
        validated: (resolved) => {
          const h = resolved.config.ranksPerHost.length;
          if (h !== tasks)
            throw new UsageError(
              `the job has ${tasks} task(s) but the topology ${h} host(s): one task per host`,
            );
        },
        onSession: (s) => {
          session = s;
          watching.bindSession(s);
          if (cancelled) s.endRounds();
        },
        onTrace: (t) => watching.bindTrace(t),
        onReport: (report) =>
          writePrivateFile(path.join(opts.out, REPORT_FILE), JSON.stringify(report, null, 2) + '\n'),
      },
    );
  } finally {
    await (watch as JobWatch | null)?.close();
    await remote.close();
  }
}
