// Talking to Slurm through its own commands (sbatch, squeue, scontrol,
// sacct), as a person would: the environment decides which cluster
// (SLURM_CONF for the tests' one-node cluster, the site's config otherwise).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export type JobState =
  | 'PENDING'
  | 'RUNNING'
  | 'COMPLETING'
  | 'COMPLETED'
  | 'CANCELLED'
  | 'FAILED'
  | 'TIMEOUT'
  | 'NODE_FAIL'
  | 'OUT_OF_MEMORY'
  | 'PREEMPTED'
  | 'BOOT_FAIL'
  | 'DEADLINE'
  | string;

const FINAL = new Set([
  'COMPLETED',
  'CANCELLED',
  'FAILED',
  'TIMEOUT',
  'NODE_FAIL',
  'OUT_OF_MEMORY',
  'PREEMPTED',
  'BOOT_FAIL',
  'DEADLINE',
]);

export function isFinal(state: JobState): boolean {
  return FINAL.has(state);
}

export class SlurmError extends Error {
  override readonly name = 'SlurmError';
}

async function slurm(cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  try {
    const { stdout } = await run(cmd, args, { env: env ?? process.env, timeout: 30_000 });
    return stdout;
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    if (err.code === 'ENOENT')
      throw new SlurmError(`${cmd} not found: is Slurm installed here?`, { cause: e });
    const why = (err.stderr ?? '').trim().split('\n')[0] || err.message;
    throw new SlurmError(`${cmd} failed: ${why}`, { cause: e });
  }
}

/** Submits a batch script; resolves with the job id. */
export async function sbatch(scriptPath: string, env?: NodeJS.ProcessEnv): Promise<string> {
  const out = (await slurm('sbatch', ['--parsable', scriptPath], env)).trim();
  const id = out.split(';')[0];
  if (!/^\d+$/.test(id)) throw new SlurmError(`sbatch answered '${out}', not a job id`);
  return id;
}

export interface JobStatus {
  state: JobState;
  exitCode: string;
  reason?: string;
  nodes?: string;
}

function field(text: string, name: string): string | undefined {
  return new RegExp(`(?:^|\\s)${name}=(\\S*)`).exec(text)?.[1];
}

/** The job's state: scontrol while the controller still knows it, sacct after; null if neither does. */
export async function jobStatus(id: string, env?: NodeJS.ProcessEnv): Promise<JobStatus | null> {
  try {
    const text = await slurm('scontrol', ['show', 'job', '-o', id], env);
    const state = field(text, 'JobState');
    if (state)
      return {
        state,
        exitCode: field(text, 'ExitCode') ?? '',
        reason: field(text, 'Reason'),
        nodes: field(text, 'NodeList'),
      };
  } catch {
    // an unknown job id: ask accounting
  }
  try {
    const text = await slurm('sacct', ['-n', '-X', '-P', '-j', id, '-o', 'State,ExitCode,NodeList'], env);
    const [state, exitCode, nodes] = text.trim().split('\n')[0]?.split('|') ?? [];
    // "CANCELLED by 0" -> CANCELLED
    if (state) return { state: state.split(' ')[0], exitCode: exitCode ?? '', nodes };
  } catch {
    // no accounting here
  }
  return null;
}

/** Polls until the job reaches a final state (reporting each change); a job Slurm forgot is an error. */
export async function waitJob(
  id: string,
  onChange: (s: JobStatus) => void,
  env?: NodeJS.ProcessEnv,
  pollMs = 1000,
): Promise<JobStatus> {
  let last = '';
  let unknown = 0;
  for (;;) {
    const s = await jobStatus(id, env);
    if (s === null) {
      if (++unknown > 10)
        throw new SlurmError(`job ${id}: Slurm no longer knows it (no scontrol or sacct record)`);
    } else {
      unknown = 0;
      if (s.state !== last) {
        last = s.state;
        onChange(s);
      }
      if (isFinal(s.state)) return s;
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
