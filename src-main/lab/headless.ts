// Runs a topology to completion without a window and builds the `run --json`
// report (CLI.md 2): links with exact byte counts, per-host uplink bytes,
// per-round accepted ranks and checker verdicts, the dead ranks, the verdict.
import type { RoundReport, Finding } from '@shared/lab/records';
import type { LinkView } from '@shared/lab/state';
import type { TopologyConfig } from '@shared/lab/topology';
import type { ClusterConfig } from '../engine/cluster';
import type { Fault } from './round-driver';
import { LabSession, type LabSessionOptions } from './session';

export type RunVerdict = 'ok' | 'mismatch' | 'incomplete' | 'error';

export interface RunReport {
  mode: TopologyConfig['mode'];
  labOnly: boolean;
  policy: TopologyConfig['policy'];
  hosts: number;
  ranksPerHost: number | number[];
  modelBytes: number;
  dtype: TopologyConfig['dtype'];
  seed: number;
  saltHex: string;
  roundsRequested: number;
  roundsCompleted: number;
  links: LinkView[];
  uplinkBytesPerHost: number[];
  /** Uplink bytes sent during the rounds only (no handshakes), per host. */
  roundBytesPerHost: number[];
  rounds: RoundReport[];
  dead: number[];
  faults: Fault[];
  findings: Finding[];
  ended: string;
  verdict: RunVerdict;
}

export async function runHeadless(
  config: TopologyConfig,
  opts: {
    snapLen?: number;
    faults?: Fault[];
    extra?: Partial<ClusterConfig>;
    onSession?: (s: LabSession) => void;
    onRoundsStart?: () => void;
    onRoundsEnd?: () => void;
    maxMs?: number;
    /** Engine events beside the round driver's (LabSessionOptions.observe). */
    observe?: LabSessionOptions['observe'];
  } = {},
): Promise<RunReport> {
  const session = new LabSession({ snapLen: opts.snapLen ?? 0, observe: opts.observe });
  const faults = opts.faults ?? [];
  opts.onSession?.(session);
  await session.start(config, opts.extra ?? {}, faults);
  opts.onRoundsStart?.();
  // The outcome is read when the rounds end, before the teardown's own exits.
  let atEnd: { dead: number[]; ended: { reason: string; error: boolean } | null };
  // A run that cannot finish (a parked barrier, a blackholed host) ends at the deadline.
  let deadlineHit = false;
  const deadline = opts.maxMs
    ? setTimeout(() => {
        deadlineHit = true;
        session.roundDriver?.stop();
      }, opts.maxMs)
    : undefined;
  try {
    await session.finished();
    clearTimeout(deadline);
    opts.onRoundsEnd?.();
  } finally {
    const c = session.activeCluster!;
    const d = session.roundDriver!;
    atEnd = {
      dead: c.hostRanks.flat().filter((r) => d.rankStates[r] === 'dead' || c.dead.isDead(r)),
      ended: d.ended ? { ...d.ended } : null,
    };
    await session.stop();
  }
  const cluster = session.activeCluster!;
  const driver = session.roundDriver!;
  const snap = session.snapshot();
  const links = cluster.tap.linkViews();
  const hosts = config.ranksPerHost.length;
  const uplink = new Array<number>(hosts).fill(0);
  for (const l of links)
    if (l.kind === 'uplink' && l.host >= 0 && l.host < hosts) uplink[l.host] += l.bytesUp;
  const roundBytes = new Array<number>(hosts).fill(0);
  for (const r of driver.reports) r.uplinkBytesPerHost.forEach((b, h) => (roundBytes[h] += b));
  const { dead, ended } = atEnd;
  let verdict: RunVerdict = 'ok';
  if (driver.reports.some((r) => r.verdict === 'mismatch')) verdict = 'mismatch';
  else if (ended?.error) verdict = 'error';
  else if (driver.roundsCompleted < config.rounds) {
    // Under the strict policy a fault ends the reduce by design (WIRE.md 7.2).
    const strictStop = config.policy === 'strict' && faults.length > 0 && ended !== null;
    if (!strictStop) verdict = 'incomplete';
  }
  const k = config.ranksPerHost;
  return {
    mode: config.mode,
    labOnly: config.mode !== 'fold',
    policy: config.policy,
    hosts,
    ranksPerHost: k.every((x) => x === k[0]) ? k[0] : [...k],
    modelBytes: config.modelBytes,
    dtype: config.dtype,
    seed: config.seed,
    saltHex: snap.saltHex,
    roundsRequested: config.rounds,
    roundsCompleted: driver.roundsCompleted,
    links,
    uplinkBytesPerHost: uplink,
    roundBytesPerHost: roundBytes,
    rounds: driver.reports,
    dead,
    faults,
    findings: session.findings,
    ended:
      ended?.reason ??
      (driver.roundsCompleted >= config.rounds
        ? 'all rounds completed'
        : deadlineHit
          ? `deadline of ${opts.maxMs} ms reached`
          : 'stopped'),
    verdict,
  };
}
