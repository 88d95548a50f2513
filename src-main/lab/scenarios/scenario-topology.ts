// A whole small topology for the reproductions that are about the cluster
// (a wedged rank, NaN at mass 0, a broken host, Nagle, a stale relay build):
// the same headless run as `relay-lab run`, with every rank pid tracked and,
// optionally, the tap's unit records and the controller's events collected.
import type { UnitRecord } from '@shared/lab/records';
import { DEFAULT_TOPOLOGY, type TopologyConfig } from '@shared/lab/topology';
import type { HistoricalBehaviours } from '../../engine/cluster';
import type { Cluster } from '../../engine/cluster';
import { runTopology, type RunReport } from '../run-topology';
import type { Fault } from '../round-driver';
import type { ScenarioContext } from './types';
import { recordSession } from '../trace/session-recording';
import type { TraceRecorder } from '../trace/recorder';

export interface ScenarioTopologyOptions {
  historical?: HistoricalBehaviours;
  faults?: Fault[];
  maxMs?: number;
  /** Keep the tap's unit records whose kind is listed. */
  recordKinds?: string[];
  /** Called once the cluster is up, before the rounds run. */
  onCluster?: (c: Cluster) => void;
}

export async function runScenarioTopology(
  ctx: ScenarioContext,
  config: Partial<TopologyConfig>,
  opts: ScenarioTopologyOptions = {},
): Promise<{ report: RunReport; records: UnitRecord[] }> {
  const records: UnitRecord[] = [];
  let trace: TraceRecorder | null = null;
  const report = await runTopology(
    {
      ...DEFAULT_TOPOLOGY,
      roundIntervalMs: 0,
      ...(ctx.controlIndexTable ? { controlIndexTable: ctx.controlIndexTable } : {}),
      ...config,
    },
    {
      faults: opts.faults,
      maxMs: opts.maxMs,
      extra: { historical: opts.historical, startTimeoutMs: 20_000 },
      onSession: (s) => {
        if (ctx.observe) s.subscribe(ctx.observe);
        if (opts.recordKinds) {
          s.subscribe((b) => {
            for (const e of b.events)
              if (e.type === 'records')
                records.push(...e.records.filter((r) => opts.recordKinds!.includes(r.kind)));
          });
        }
      },
      snapLen: ctx.traceFile ? 64 * 1024 : undefined,
      onRoundsStart: (s) => {
        const c = s.activeCluster;
        if (!c) return;
        // The window's runs are recorded, so Inspect can open them at their decisive unit.
        if (ctx.traceFile) trace = recordSession(s, ctx.traceFile, { producer: 'relay-lab scenario' });
        for (const p of c.ranks) ctx.track(p.pid);
        opts.onCluster?.(c);
      },
    },
  ).finally(() => (trace as TraceRecorder | null)?.close().catch(() => {}));
  return { report, records };
}

/** The findings of a run as short lines ("stalled: round 1 barrier ..."). */
export function findingLines(report: RunReport, kinds: string[], max = 4): string[] {
  return report.findings
    .filter((f) => kinds.includes(f.kind))
    .slice(0, max)
    .map((f) => `${f.kind}: ${f.message}`);
}
