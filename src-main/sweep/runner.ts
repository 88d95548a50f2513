// Runs a sweep: every (topology, mode) case on its own real cluster (rank
// processes, relays, controller, loopback sockets), one after another, through
// the same headless path as `relay-lab run`. Each host uplink can be shaped to
// one shared rate per direction (the host's NIC, see shapeUplinks). What a
// case costs is read from the tap's exact byte counters between the first
// round and the last, and put beside the theory (src-shared/sweep/theory.ts).
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_TOPOLOGY, LAB_ONLY_MODES, type TopologyConfig, type UplinkMode } from '@shared/lab/topology';
import type { LinkView } from '@shared/lab/state';
import { DEFAULT_WARMUP, maxWarmupRounds, topologyLabel, warmupOver } from '@shared/sweep/spec';
import { dataDownBytes, dataUpBytes, roundFrameBytes, roundStats, shapedRoundMs } from '@shared/sweep/theory';
import type { SweepCase, SweepProgress, SweepResult, SweepSpec } from '@shared/sweep/types';
import { releaseSharedLanes } from '../engine/link-fault';
import { runTopology, type RunReport } from '../lab/run-topology';
import type { TopologySession } from '../lab/topology-session';
import { recordSession } from '../lab/trace/session-recording';
import type { TraceRecorder } from '../lab/trace/recorder';
import { MemoryWatch } from './memory';
import { StageRecorder, summarizeStages } from '../lab/bench/stages';
import type { StageSummary } from '@shared/lab/round-stages';

export interface SweepRunOptions {
  /** Aborting stops the running case (dropped) and keeps every finished one. */
  signal?: AbortSignal;
  onProgress?: (p: SweepProgress) => void;
  /** Records each case's trace (tap units, 64 KiB each) into this folder. */
  traceDir?: string;
  /** First part of each trace file name (default `sweep-<UTC stamp>`). */
  traceStem?: string;
  producer?: string;
}

let sweepNumber = 0;

/** Applies the sweep's shaping to every uplink of the running cluster: one shared lane per host and direction. */
export function shapeUplinks(session: TopologySession, spec: SweepSpec, laneKey: string): void {
  if (!spec.uplinkBandwidth && !spec.uplinkLatencyMs) return;
  const cluster = session.activeCluster!;
  // In direct mode a host has no relay: its ranks' own connections to the
  // controller are grouped by host into one lane, so the host's NIC is what is
  // shaped and direct gets the same rate per host as fold and forward.
  for (const l of cluster.tap.linkViews())
    if (l.kind === 'uplink')
      cluster.setLinkFault(l.id, {
        dir: 'both',
        bandwidth: spec.uplinkBandwidth,
        latencyMs: spec.uplinkLatencyMs,
        shareKey: `${laneKey}.h${l.host}`,
      });
}

/** Bytes per host between two counter snapshots, by channel and direction. */
function deltas(before: LinkView[], after: LinkView[], hosts: number) {
  const zero = () => new Array<number>(hosts).fill(0);
  const out = { dataUp: zero(), dataDown: zero(), controlUp: zero(), controlDown: zero() };
  const start = new Map(before.map((l) => [l.id, l]));
  for (const l of after) {
    if (l.kind !== 'uplink' || l.host < 0 || l.host >= hosts) continue;
    const b = start.get(l.id);
    const up = l.bytesUp - (b?.bytesUp ?? 0);
    const down = l.bytesDown - (b?.bytesDown ?? 0);
    if (l.channel === 'data') {
      out.dataUp[l.host] += up;
      out.dataDown[l.host] += down;
    } else {
      out.controlUp[l.host] += up;
      out.controlDown[l.host] += down;
    }
  }
  return out;
}

function traceFileName(stem: string, index: number, label: string, mode: UplinkMode): string {
  return `${stem}-c${String(index).padStart(2, '0')}-${label.replace(/\+/g, 'p')}-${mode}.trace.ndjson`;
}

/** One case; null when the signal aborted it before its rounds ended. */
export async function runSweepCase(
  spec: SweepSpec,
  ranksPerHost: number[],
  mode: UplinkMode,
  index: number,
  opts: SweepRunOptions & { traceStem: string },
): Promise<SweepCase | null> {
  const label = topologyLabel(ranksPerHost);
  const warmupSpec = spec.warmupRounds ?? DEFAULT_WARMUP;
  // The round the measured ones start at: decided as rounds begin ('auto' ends on time or rounds).
  let warmup = maxWarmupRounds(warmupSpec);
  let warmupDecided = false;
  let firstRoundAt = 0;
  const hosts = ranksPerHost.length;
  const config: TopologyConfig = {
    ...DEFAULT_TOPOLOGY,
    ranksPerHost,
    mode,
    modelBytes: spec.modelBytes,
    dtype: spec.dtype,
    // An upper bound: the rounds end once the measured ones are done (onRoundStart below).
    rounds: spec.rounds + maxWarmupRounds(warmupSpec),
    seed: spec.seed ?? 1,
    roundIntervalMs: 0,
    saltHex: undefined,
    // An external relay on every host: fold cases only (flodl's relay folds; the baselines are the lab's).
    ...(spec.relayCommand && mode === 'fold'
      ? { relayCommands: ranksPerHost.map(() => spec.relayCommand!) }
      : {}),
  };
  const frame = roundFrameBytes(spec.modelBytes, spec.dtype);
  const theoryUp = ranksPerHost.map((k) => dataUpBytes(mode, k, frame));
  const theoryDown = ranksPerHost.map((k) => dataDownBytes(mode, k, frame));
  const laneKey = `sweep${process.pid}.${++sweepNumber}`;
  const tracePath = opts.traceDir
    ? path.join(opts.traceDir, traceFileName(opts.traceStem, index, label, mode))
    : undefined;
  let session: TopologySession | null = null;
  let recorder: TraceRecorder | null = null;
  let before: LinkView[] = [];
  let after: LinkView[] | null = null;
  let rankPeak: number | null = null;
  let aborted = opts.signal?.aborted ?? false;
  const memory = new MemoryWatch();
  // The bench's stage breakdown, from events the engine reports anyway (no timers in the engine).
  const stageRecorder = new StageRecorder();
  let stages: StageSummary | undefined;
  const onAbort = () => {
    aborted = true;
    session?.endRounds();
  };
  opts.signal?.addEventListener('abort', onAbort);
  const base = { index, topology: label, ranksPerHost, mode, labOnly: LAB_ONLY_MODES.has(mode) };
  let report: RunReport;
  try {
    memory.start();
    report = await runTopology(config, {
      snapLen: tracePath ? 64 * 1024 : 0,
      // A wedged case ends at a deadline instead of holding the sweep.
      maxMs: 60_000 + (spec.rounds + maxWarmupRounds(warmupSpec)) * 30_000,
      observe: stageRecorder.observe,
      onSession: (s) => (session = s),
      onRoundsStart: () => {
        const s = session!;
        shapeUplinks(s, spec, laneKey);
        if (tracePath)
          recorder = recordSession(s, tracePath, { producer: opts.producer ?? 'relay-lab sweep' });
        before = s.activeCluster!.tap.linkViews();
        // The counters start over when the first measured round begins: every byte of the
        // warm-up rounds' data has been delivered by then (each rank adopted their consensus).
        const driver = s.requireRounds();
        driver.onRoundStart = (r) => {
          if (r === 0) firstRoundAt = performance.now();
          if (!warmupDecided && warmupOver(warmupSpec, r, performance.now() - firstRoundAt)) {
            warmupDecided = true;
            warmup = r;
            before = s.activeCluster!.tap.linkViews();
          }
          // The measured rounds are done: this round does not start.
          if (warmupDecided && r >= warmup + spec.rounds) driver.stop();
        };
        if (aborted) s.endRounds();
      },
      onRoundsEnd: () => {
        const c = session!.activeCluster!;
        after = c.tap.linkViews();
        stages = summarizeStages(stageRecorder.breakdown(c.tap.heldRecords, c.tap.t0, warmup));
        rankPeak = MemoryWatch.peakOfProcesses(c.ranks.map((r) => r.pid));
      },
    });
  } catch (e) {
    if (aborted) return null;
    return {
      ...base,
      roundsRequested: spec.rounds,
      roundsCompleted: 0,
      dataUp: { measured: [], theory: theoryUp },
      dataDown: { measured: [], theory: theoryDown },
      controlUp: [],
      controlDown: [],
      uplinkUpPerHost: [],
      controllerIngressPerRound: 0,
      controllerEgressPerRound: 0,
      roundMs: { median: 0, p90: 0, each: [] },
      theoryRoundMs: null,
      memory: { enginePeakRssBytes: memory.peak, rankPeakRssBytes: null },
      verdicts: { ok: 0, mismatch: 0, unchecked: 0 },
      verdict: 'error',
      ended: 'could not run',
      error: (e as Error).message,
    };
  } finally {
    memory.stop();
    opts.signal?.removeEventListener('abort', onAbort);
    releaseSharedLanes(`${laneKey}.`);
    if (recorder) await (recorder as TraceRecorder).close().catch(() => {});
  }
  if (aborted) {
    if (tracePath) fs.rmSync(tracePath, { force: true });
    return null;
  }
  const measured = report.rounds.filter((r) => r.round >= warmup);
  const roundsCompleted = Math.max(0, report.roundsCompleted - warmup);
  // The rounds were asked for up to the longest warm-up: ending once the measured ones are done is complete.
  const done = warmupDecided && roundsCompleted >= spec.rounds && report.verdict === 'incomplete';
  const n = Math.max(1, roundsCompleted);
  const per = (xs: number[]) => xs.map((x) => x / n);
  const d = deltas(before, after ?? report.links, hosts);
  const each = measured.map((r) => r.durationMs);
  const stats = roundStats(each);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return {
    ...base,
    roundsRequested: spec.rounds,
    roundsCompleted,
    warmupRounds: warmup,
    dataUp: { measured: per(d.dataUp), theory: theoryUp },
    dataDown: { measured: per(d.dataDown), theory: theoryDown },
    controlUp: per(d.controlUp),
    controlDown: per(d.controlDown),
    uplinkUpPerHost: per(d.dataUp.map((b, h) => b + d.controlUp[h])),
    controllerIngressPerRound: (sum(d.dataUp) + sum(d.controlUp)) / n,
    controllerEgressPerRound: (sum(d.dataDown) + sum(d.controlDown)) / n,
    roundMs: { ...stats, each },
    ...(stages && stages.sumOfMediansMs > 0 ? { stages } : {}),
    theoryRoundMs: shapedRoundMs(theoryUp, theoryDown, spec.uplinkBandwidth, spec.uplinkLatencyMs),
    memory: { enginePeakRssBytes: memory.peak, rankPeakRssBytes: rankPeak },
    verdicts: {
      ok: measured.filter((r) => r.verdict === 'ok').length,
      mismatch: measured.filter((r) => r.verdict === 'mismatch').length,
      unchecked: measured.filter((r) => r.verdict === 'unchecked').length,
    },
    verdict: done ? 'ok' : report.verdict,
    ended: done ? 'all rounds completed' : report.ended,
    ...(tracePath ? { trace: opts.traceDir ? path.basename(tracePath) : tracePath } : {}),
  };
}

/** `sweep-20261201-040506` for a sweep started at that (UTC) time. */
export function sweepStem(at: Date): string {
  return `sweep-${at.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)}`;
}

/** Every case in order (topology-major); an abort keeps the finished cases and says so. */
export async function runSweep(spec: SweepSpec, opts: SweepRunOptions = {}): Promise<SweepResult> {
  const startedAt = new Date();
  const stem = opts.traceStem ?? sweepStem(startedAt);
  if (opts.traceDir) fs.mkdirSync(opts.traceDir, { recursive: true });
  const plan = spec.topologies.flatMap((t) => spec.modes.map((m) => ({ t, m })));
  const cases: SweepCase[] = [];
  const progress = (p: Omit<SweepProgress, 'total'>) => opts.onProgress?.({ ...p, total: plan.length });
  for (const [i, { t, m }] of plan.entries()) {
    if (opts.signal?.aborted) break;
    progress({ done: i, current: `${topologyLabel(t)} ${m}`, state: 'running' });
    const c = await runSweepCase(spec, t, m, i, { ...opts, traceStem: stem });
    if (!c) break;
    cases.push(c);
    progress({ done: i + 1, current: null, finished: c, state: 'running' });
  }
  const complete = cases.length === plan.length;
  const reason = opts.signal?.reason;
  const result: SweepResult = {
    format: 'relay-lab-sweep',
    version: 1,
    spec,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    casesPlanned: plan.length,
    complete,
    ...(complete ? {} : { stoppedBy: typeof reason === 'string' ? reason : 'cancelled' }),
    cases,
  };
  progress({ done: cases.length, current: null, state: complete ? 'done' : 'cancelled' });
  return result;
}
