// The report `relay-lab slurm submit --wait --json` prints: the run's report
// (the shape of `relay-lab run --json`, written by the job's first task) with
// the job's own end beside it. A job Slurm ended (cancelled, timed out, a
// node lost) never reads as a clean run, whatever rounds it finished.
import type { RunReport } from '../lab/run-topology';
import type { ResolvedTopology } from '@shared/lab/topology-config';
import type { Fault } from '../lab/round-driver';
import type { JobStatus } from './job';

export interface SlurmJobInfo {
  id: string;
  state: string;
  exitCode: string;
  nodes?: string;
  out: string;
}

export type SlurmRunReport = RunReport & { job: SlurmJobInfo };

/** The report for a job that wrote none (it never started its rounds, or was killed before the end). */
function emptyReport(resolved: ResolvedTopology, schedule: Fault[]): RunReport {
  const c = resolved.config;
  const k = c.ranksPerHost;
  return {
    mode: c.mode,
    labOnly: c.mode !== 'fold',
    policy: c.policy,
    hosts: k.length,
    ranksPerHost: k.every((x) => x === k[0]) ? k[0] : [...k],
    modelBytes: c.modelBytes,
    dtype: c.dtype,
    seed: c.seed,
    // The job made its own salt (in its folder); this side never knew it.
    saltHex: '',
    roundsRequested: c.rounds,
    roundsCompleted: 0,
    links: [],
    uplinkBytesPerHost: k.map(() => 0),
    roundBytesPerHost: k.map(() => 0),
    rounds: [],
    dead: [],
    faults: schedule,
    findings: [],
    ended: 'no report written',
    verdict: 'error',
  };
}

export function jobReport(
  written: RunReport | null,
  status: JobStatus,
  job: { id: string; out: string },
  resolved: ResolvedTopology,
  schedule: Fault[],
): SlurmRunReport {
  const report = written ?? emptyReport(resolved, schedule);
  const info: SlurmJobInfo = {
    id: job.id,
    state: status.state,
    exitCode: status.exitCode,
    nodes: status.nodes,
    out: job.out,
  };
  if (status.state === 'COMPLETED') return { ...report, job: info };
  const how = status.state.toLowerCase().replace(/_/g, ' ');
  return {
    ...report,
    ended: `job ${how}${status.reason && status.reason !== 'None' ? ` (${status.reason})` : ''}: ${report.ended}`,
    verdict:
      report.verdict === 'ok' || report.verdict === 'mismatch'
        ? report.verdict === 'ok'
          ? 'incomplete'
          : 'mismatch'
        : report.verdict,
    job: info,
  };
}
