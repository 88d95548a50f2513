// runTopology: one topology from start to its last round, without a window,
// and the `run --json` report (CLI.md 2): links with exact byte counts,
// per-host uplink bytes, per-round accepted ranks and checker verdicts, the
// dead ranks, the verdict. Used by `relay-lab run`, compareModes, bench and
// the reproductions that need a whole topology (scenarios/scenario-topology.ts).
import type { RoundReport, Finding } from '@shared/lab/records';
import type { LinkView } from '@shared/lab/state';
import type { TopologyConfig } from '@shared/lab/topology';
import type { ClusterConfig } from '../engine/cluster';
import type { Fault } from './round-driver';
import type { ResolvedTopology } from '@shared/lab/topology-config';
import { TopologySession, type TopologySessionOptions } from './topology-session';
import type { ExternalRelayStatus } from './external-relay-notes';

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
  /** Hosts whose relay was a command (an external relay): the command and how it exited. */
  externalRelays?: ExternalRelayStatus[];
  ended: string;
  verdict: RunVerdict;
}

export interface RunTopologyOptions {
  snapLen?: number;
  faults?: Fault[];
  extra?: Partial<ClusterConfig>;
  /** The session before it starts (to subscribe to its events). */
  onSession?: (s: TopologySession) => void;
  /** The cluster is up, the rounds are about to run. */
  onRoundsStart?: (s: TopologySession) => void;
  onRoundsEnd?: () => void;
  /** A run that cannot finish (a parked barrier, a blackholed host) ends at this deadline. */
  maxMs?: number;
  /** Engine events beside the round driver's (TopologySessionOptions.observe; the bench's stage timings). */
  observe?: TopologySessionOptions['observe'];
  /** An external relay's output line (TopologySessionOptions.onExternalRelayLine). */
  onExternalRelayLine?: TopologySessionOptions['onExternalRelayLine'];
}

/** `topology`: a config (checked here) or one resolved at the edge (`relay-lab run`: its salt is not parsed again). */
export async function runTopology(
  topology: TopologyConfig | ResolvedTopology,
  opts: RunTopologyOptions = {},
): Promise<RunReport> {
  const config = 'salt' in topology && 'config' in topology ? topology.config : topology;
  const session = new TopologySession({
    snapLen: opts.snapLen ?? 0,
    observe: opts.observe,
    onExternalRelayLine: opts.onExternalRelayLine,
  });
  const faults = opts.faults ?? [];
  opts.onSession?.(session);
  await session.start(topology, opts.extra ?? {}, faults);
  opts.onRoundsStart?.(session);
  let deadlineHit = false;
  const deadline = opts.maxMs
    ? setTimeout(() => {
        deadlineHit = true;
        session.endRounds();
      }, opts.maxMs)
    : undefined;
  let outcome;
  try {
    // The outcome is read when the rounds end, before the teardown's own exits.
    outcome = await session.finished();
    clearTimeout(deadline);
    opts.onRoundsEnd?.();
  } finally {
    clearTimeout(deadline);
    await session.stop();
  }
  const { dead, ended, reports, roundsCompleted } = outcome;
  const links = session.linkViews();
  const hosts = config.ranksPerHost.length;
  const uplink = new Array<number>(hosts).fill(0);
  for (const l of links)
    if (l.kind === 'uplink' && l.host >= 0 && l.host < hosts) uplink[l.host] += l.bytesUp;
  const roundBytes = new Array<number>(hosts).fill(0);
  for (const r of reports) r.uplinkBytesPerHost.forEach((b, h) => (roundBytes[h] += b));
  let verdict: RunVerdict = 'ok';
  if (reports.some((r) => r.verdict === 'mismatch')) verdict = 'mismatch';
  else if (ended?.error) verdict = 'error';
  else if (roundsCompleted < config.rounds) {
    // Under the strict policy a fault ends the reduce by design (WIRE.md 7.2): one scheduled, or
    // one a person applied while the rounds ran (a window attached to a job; a fault finding each).
    const faulted = faults.length > 0 || session.findings.some((f) => f.kind === 'fault');
    const strictStop = config.policy === 'strict' && faulted && ended !== null;
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
    saltHex: session.saltHex,
    roundsRequested: config.rounds,
    roundsCompleted,
    links,
    uplinkBytesPerHost: uplink,
    roundBytesPerHost: roundBytes,
    rounds: reports,
    dead,
    faults,
    findings: session.findings,
    ...(session.externalRelays.length > 0
      ? { externalRelays: session.externalRelays.map((x) => ({ ...x })) }
      : {}),
    ended:
      ended?.reason ??
      (roundsCompleted >= config.rounds
        ? 'all rounds completed'
        : deadlineHit
          ? `deadline of ${opts.maxMs} ms reached`
          : 'stopped'),
    verdict,
  };
}
