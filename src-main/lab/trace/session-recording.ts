// One call to trace a running TopologySession to a file (or any stream): the
// header from the session's snapshot and tap, the recorder attached to the
// tap (with backfill) and to the session's events. The caller forwards
// accepted commands and faults to the recorder, and closes it after stop.
import type { Writable } from 'node:stream';
import type { LabBatch } from '@shared/lab/contract';
import type { SessionSnapshot } from '@shared/lab/state';
import type { TraceLink } from './format';
import { engineTraceLinks, type ClusterPorts } from './links';
import { makeTraceHeader, TraceWriter } from './ndjson';
import { TraceRecorder, wallClockOf, type RecorderOptions, type TapSource } from './recorder';

/** What recordSession reads of a TopologySession (src-main/lab/topology-session.ts), after start. */
export interface RecordableSession {
  readonly activeCluster: (ClusterPorts & { tap: TapSource & { t0: number; snapLen: number } }) | null;
  snapshot(): SessionSnapshot;
  subscribe(listener: (b: LabBatch) => void): () => void;
}

export interface RecordSessionOptions extends RecorderOptions {
  /** e.g. "relay-lab 0.1.0". */
  producer?: string;
  /** The links with real endpoints, when the engine knows them (default: engineTraceLinks). */
  links?: TraceLink[];
}

export function recordSession(
  session: RecordableSession,
  out: string | Writable,
  opts: RecordSessionOptions = {},
): TraceRecorder {
  const cluster = session.activeCluster;
  if (!cluster) throw new Error('recordSession: the session has no running cluster (start it first)');
  const snap = session.snapshot();
  const header = makeTraceHeader({
    startedAt: wallClockOf(cluster.tap.t0),
    saltHex: snap.saltHex,
    config: snap.config,
    links: opts.links ?? engineTraceLinks(cluster),
    producer: opts.producer,
    snapLen: cluster.tap.snapLen,
  });
  const writer = typeof out === 'string' ? TraceWriter.toFile(out, header) : new TraceWriter(out, header);
  opts.index?.attachWriter(writer);
  const t0 = cluster.tap.t0;
  return new TraceRecorder(writer, () => performance.now() - t0, { linkFor: opts.linkFor, index: opts.index })
    .attachTap(cluster.tap, { backfill: true })
    .attachEvents((l) => session.subscribe(l));
}
