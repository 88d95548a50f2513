// Records a running session into a trace: every tap record with its
// captured bytes, the session's round reports, findings, logs and link
// counters, and the commands that changed the topology (kill, pause, ...).
// It listens to the tap itself, not to the window's batches, which may drop
// records under load.
import type { LabBatch, LabCommand, LabEvent, LinkFault } from '@shared/lab/contract';
import type { UnitRecord } from '@shared/lab/records';
import type { LinkView } from '@shared/lab/state';
import type { LifecycleAction, LifecycleEvent, TraceLink } from './format';
import { linkViewFromId, syntheticTraceLinks } from './links';
import type { TraceWriter } from './ndjson';
import type { RecordIndex } from './record-index';

/** What the recorder needs of the engine's Tap (src-main/engine/tap.ts). */
export interface TapSource {
  onRecord(listener: (r: UnitRecord) => void): () => void;
  bytesOf(seq: number): { bytes: Uint8Array; record: UnitRecord } | undefined;
  /** Records so far (seq 0 .. recordCount - 1). */
  readonly recordCount: number;
  linkViews(): LinkView[];
}

export interface RecorderOptions {
  /** The endpoints of a link that appears after the header (default: synthetic ones, marked so). */
  linkFor?: (view: LinkView) => TraceLink;
  /** Notes where each unit's line goes, so it can be read back by seq (record-index.ts). */
  index?: RecordIndex;
}

const COMMAND_ACTIONS: Partial<Record<LabCommand['type'], LifecycleAction>> = {
  start: 'start',
  stop: 'stop',
  killRank: 'killRank',
  pauseRank: 'pauseRank',
  resumeRank: 'resumeRank',
  killHost: 'killHost',
  pauseRounds: 'pauseRounds',
  resumeRounds: 'resumeRounds',
};

/** A fault's kind as a trace names it (the first knob it sets). */
export function faultKind(f: LinkFault): string {
  for (const k of [
    'blackhole',
    'reset',
    'corruptNext',
    'stallMs',
    'sliceBytes',
    'bandwidth',
    'latencyMs',
  ] as const)
    if (f[k] !== undefined && f[k] !== false)
      return k === 'latencyMs' ? 'latency' : k === 'stallMs' ? 'stall' : k === 'sliceBytes' ? 'slicer' : k;
  return 'none';
}

export class TraceRecorder {
  private readonly detach: (() => void)[] = [];
  private readonly known: Set<string>;
  private tap: TapSource | null = null;

  /** `now` = the session clock (ms since the tap's t0), for events that carry no time of their own. */
  constructor(
    readonly writer: TraceWriter,
    private readonly now: () => number,
    private readonly opts: RecorderOptions = {},
  ) {
    this.known = new Set(writer.header.links.map((l) => l.id));
  }

  /** A record on a link the header does not list: declare the link first, so the trace stays exportable. */
  private declareLink(id: string, t: number): void {
    const view = this.tap?.linkViews().find((v) => v.id === id) ?? linkViewFromId(id);
    if (!view) return;
    const controllerPort = this.writer.header.links.find((l) => l.kind === 'uplink')?.serverPort ?? 1337;
    const link =
      this.opts.linkFor?.(view) ?? syntheticTraceLinks([view], controllerPort, this.known.size)[0]!;
    this.known.add(id);
    this.writer.write({ type: 'link', t, link });
  }

  /**
   * Records every unit the tap sees from now on; with `backfill`, first the
   * units it already recorded and still holds (a session's handshakes happen
   * inside Cluster.start, before anyone can attach). Both happen in one tick,
   * so no unit falls between them.
   */
  attachTap(tap: TapSource, opts: { backfill?: boolean } = {}): this {
    this.tap = tap;
    if (opts.backfill) {
      for (let seq = 0; seq < tap.recordCount; seq++) {
        const held = tap.bytesOf(seq);
        if (held) this.record(held.record, held.bytes);
      }
    }
    this.detach.push(tap.onRecord((r) => this.record(r, tap.bytesOf(r.seq)?.bytes)));
    return this;
  }

  /** Records rounds, findings, logs and link counters from the session's batches. */
  attachEvents(subscribe: (listener: (b: LabBatch) => void) => () => void): this {
    this.detach.push(subscribe((b) => b.events.forEach((e) => this.labEvent(e))));
    return this;
  }

  record(r: UnitRecord, bytes: Uint8Array | undefined): void {
    if (!this.known.has(r.link)) this.declareLink(r.link, r.t);
    // The bytes still held decide what was captured (the tap may have let them go).
    const kept = (bytes ?? new Uint8Array(0)).subarray(0, r.length);
    const at = this.writer.bytesWritten;
    const dropped = this.writer.dropped;
    this.writer.write({
      type: 'record',
      t: r.t,
      record: kept.length === r.captured ? r : { ...r, captured: kept.length },
      bytes: kept,
    });
    if (this.writer.dropped === dropped)
      this.opts.index?.add(r.seq, at, this.writer.bytesWritten, kept.length);
  }

  labEvent(e: LabEvent): void {
    switch (e.type) {
      case 'round':
        this.writer.write({ type: 'round', t: this.now(), report: e.report });
        break;
      case 'finding':
        this.writer.write({ type: 'finding', t: e.finding.t, finding: e.finding });
        break;
      case 'log':
        this.writer.write({ type: 'log', t: this.now(), level: e.level, message: e.message });
        break;
      case 'links':
        this.writer.write({ type: 'links', t: this.now(), links: e.links });
        break;
      // records come from the tap; snapshots are derived state.
    }
  }

  /**
   * A command the session accepted; the ones that change the topology become lifecycle events
   * (a link fault set or cleared: faultApplied with its kind and knobs, or faultCleared). Every
   * recording of a person's commands goes through here, so a window's session and a job its
   * watchers act on record them alike.
   */
  command(cmd: LabCommand): void {
    if (cmd.type === 'setLinkFault') {
      const f = cmd.fault;
      this.lifecycle(
        f
          ? {
              action: 'faultApplied',
              link: cmd.link,
              ...(f.dir === 'both' ? {} : { dir: f.dir }),
              fault: { ...f, kind: faultKind(f) },
            }
          : { action: 'faultCleared', link: cmd.link },
      );
      return;
    }
    const action = COMMAND_ACTIONS[cmd.type];
    if (!action) return;
    const ev: LifecycleEvent = { type: 'lifecycle', t: this.now(), action };
    if ('rank' in cmd) ev.rank = cmd.rank;
    if ('host' in cmd) ev.host = cmd.host;
    this.writer.write(ev);
  }

  /** Faults, link closes and anything else the engine reports directly. */
  lifecycle(ev: Omit<LifecycleEvent, 'type' | 't'> & { t?: number }): void {
    this.writer.write({ ...ev, type: 'lifecycle', t: ev.t ?? this.now() });
  }

  async close(): Promise<void> {
    for (const d of this.detach.splice(0)) d();
    await this.writer.close(this.now());
  }
}

/** The wall-clock time (epoch ms) of a performance.now() origin such as the tap's t0: the trace header's startedAt. */
export function wallClockOf(t0: number): number {
  return Date.now() - (performance.now() - t0);
}
