// Offline inspection: a saved trace served through the same LabApi the
// window uses for a live session, plus a time to scrub to. seek(t) sends the
// window one batch: the snapshot as it was at t, then every record, round,
// finding, log and link update up to t, so the same lists, inspector,
// ladder and charts draw the past. Commands that would change a topology
// answer OFFLINE.
import type { AnyCommand, LabApi, LabBatch, LabEvent, ReplyOf, TraceStep } from '@shared/lab/contract';
import type { UnitRecord } from '@shared/lab/records';
import type { HostView, LinkView, RankView, SessionSnapshot } from '@shared/lab/state';
import { hostName, ranksOfHosts } from '@shared/lab/topology';
import type { FindingEvent, LifecycleEvent, RecordEvent, TraceEvent, TraceHeader } from './format';
import { TraceLinkCounters } from './replay-counters';
import { TraceRoundBytes } from './replay-round-bytes';
import { TraceRankStates } from './replay-ranks';
import { loadTraceFile, type LoadedTrace } from './ndjson';
import { dispatch, type HandlerTable } from '../commands/handler';

const RECORDS_PER_EVENT = 5000;

export class TraceReplay implements LabApi {
  private readonly events: TraceEvent[];
  private readonly bySeq = new Map<number, RecordEvent>();
  private readonly listeners = new Set<(b: LabBatch) => void>();
  private position = 0;
  private readonly endT: number;

  constructor(private readonly trace: LoadedTrace) {
    // Stable sort by time: events from different processes may be slightly out of order in the file.
    this.events = trace.events.filter((e) => e.type !== 'end').sort((a, b) => a.t - b.t);
    for (const e of this.events) if (e.type === 'record') this.bySeq.set(e.record.seq, e);
    let end = 0;
    for (const e of trace.events) end = Math.max(end, e.t);
    this.endT = end;
  }

  static async fromFile(path: string): Promise<TraceReplay> {
    return new TraceReplay(await loadTraceFile(path));
  }

  get header(): TraceHeader {
    return this.trace.header;
  }
  /** The last event's time (the end line's, when the trace was closed): the end of the timeline. */
  get duration(): number {
    return this.endT;
  }
  get complete(): boolean {
    return this.trace.complete;
  }
  get truncatedTail(): boolean {
    return this.trace.truncatedTail;
  }
  get time(): number {
    return this.position;
  }

  subscribe(listener: (batch: LabBatch) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A saved trace answers what reads the past; every other command answers OFFLINE. */
  async command<C extends AnyCommand>(cmd: C): Promise<ReplyOf<C['type']>> {
    if (cmd.type === 'snapshot' || cmd.type === 'getRecordBytes')
      return dispatch(REPLAY_HANDLERS, this, cmd) as Promise<ReplyOf<C['type']>>;
    return {
      ok: false,
      error: 'OFFLINE',
      message: `'${cmd.type}' needs a running session; this is a saved trace`,
    };
  }

  /** The newest `limit` units with seq below `before` up to the current time, oldest first. */
  recordsBefore(before: number, limit: number): UnitRecord[] {
    const out: UnitRecord[] = [];
    for (let i = this.events.length - 1; i >= 0 && out.length < limit; i--) {
      const e = this.events[i]!;
      if (e.type === 'record' && e.record.seq < before && e.t <= this.position) out.push(e.record);
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  /** The unit of record `seq`, with its bytes. */
  recordEvent(seq: number): RecordEvent | undefined {
    return this.bySeq.get(seq);
  }

  /**
   * Moves the timeline to t and sends every front end the state at t: the
   * snapshot, the events up to t on the trace's clock, and the counters at
   * t last (so rates and savings are the trace's at t, not the window's).
   */
  seek(t: number): LabBatch {
    this.position = Math.max(0, Math.min(t, this.duration));
    const snapshot = this.snapshotAt(this.position);
    const batch = {
      events: [
        { type: 'snapshot', snapshot, t: this.position } as LabEvent,
        ...this.labEventsUntil(this.position),
        { type: 'links', links: snapshot.links, t: this.position } as LabEvent,
      ],
    };
    for (const l of this.listeners) l(batch);
    return batch;
  }

  /**
   * The window's events from the start up to time t, records grouped. Each
   * round report comes after the counters at its time, added up from the
   * units (see replay-counters.ts), so its savings are measured as live.
   */
  labEventsUntil(t: number): LabEvent[] {
    const out: LabEvent[] = [];
    const counters = new TraceLinkCounters(this.header.links);
    const roundBytes = new TraceRoundBytes(this.header.links, ranksOfHosts(this.header.config.ranksPerHost));
    let records: UnitRecord[] = [];
    const flushRecords = (): void => {
      if (records.length > 0) out.push({ type: 'records', records, droppedBefore: 0 });
      records = [];
    };
    for (const e of this.events) {
      if (e.t > t) break;
      if (e.type === 'record') {
        counters.unit(e.record);
        roundBytes.unit(e.record);
        records.push(e.record);
        if (records.length >= RECORDS_PER_EVENT) flushRecords();
        continue;
      }
      if (e.type === 'link') {
        counters.declare(e.link);
        roundBytes.declare(e.link);
      }
      // Link declarations and lifecycle events have no window event (see lifecycleUntil): records run on.
      if (e.type === 'link' || e.type === 'lifecycle') continue;
      flushRecords();
      if (e.type === 'round') {
        out.push({ type: 'links', links: counters.snapshot(), t: e.t });
        out.push({ type: 'round', report: roundBytes.complete(e.report) });
      } else if (e.type === 'finding') out.push({ type: 'finding', finding: e.finding });
      else if (e.type === 'log') out.push({ type: 'log', level: e.level, message: e.message });
      else if (e.type === 'links') out.push({ type: 'links', links: e.links, t: e.t });
    }
    flushRecords();
    return out;
  }

  /**
   * Where `stepTrace` goes from the current time: the first unit, round
   * report or finding after it (dir 1), or the last one before it (dir -1);
   * null at either end. A unit step names its record.
   */
  stepTarget(by: TraceStep, dir: 1 | -1): { t: number; seq?: number } | null {
    if (by === 'finding') return this.findingStep(dir);
    const type = by === 'unit' ? 'record' : 'round';
    const at = this.position;
    const hit = (e: TraceEvent) => e.type === type && (dir === 1 ? e.t > at : e.t < at);
    const e = dir === 1 ? this.events.find(hit) : this.events.findLast(hit);
    if (!e) return null;
    return e.type === 'record' ? { t: e.t, seq: e.record.seq } : { t: e.t };
  }

  /** The finding a finding step last went to, while the position is still its time. */
  private findingAt: { index: number; t: number } | null = null;

  /**
   * A finding step names the finding's unit (its recordSeq), so the window
   * selects it. Findings are taken in time order, one at a time even when
   * several share a time, and the step wraps at either end as a search does:
   * a trace opens at its end, and `finding ▶` there goes to the first.
   */
  private findingStep(dir: 1 | -1): { t: number; seq?: number } | null {
    const list = this.events
      .filter((e): e is FindingEvent => e.type === 'finding')
      .map((e, i) => ({ e, i }))
      .sort((a, b) => a.e.t - b.e.t || a.i - b.i)
      .map((x) => x.e);
    if (list.length === 0) return null;
    const at = this.position;
    let index: number;
    if (this.findingAt && this.findingAt.t === at) index = this.findingAt.index + dir;
    else if (dir === 1) index = list.findIndex((e) => e.t > at);
    else index = list.findLastIndex((e) => e.t < at);
    if (index < 0 || index >= list.length) index = dir === 1 ? 0 : list.length - 1;
    const e = list[index]!;
    this.findingAt = { index, t: Math.max(0, Math.min(e.t, this.duration)) };
    return e.finding.recordSeq !== undefined ? { t: e.t, seq: e.finding.recordSeq } : { t: e.t };
  }

  /** Kills, pauses, faults and link closes up to t: the charts' coloured bands. */
  lifecycleUntil(t: number): LifecycleEvent[] {
    return this.events.filter((e): e is LifecycleEvent => e.type === 'lifecycle' && e.t <= t);
  }

  /** The topology as the trace shows it at t: rank states from its events and units, rounds from its reports. */
  snapshotAt(t: number): SessionSnapshot {
    const config = this.header.config;
    const hostRanks = ranksOfHosts(config.ranksPerHost);
    const ranksAt = new TraceRankStates(hostRanks);
    let roundsCompleted = 0;
    let lastRound = -1;
    let links: LinkView[] | null = null;
    const counters = new TraceLinkCounters(this.header.links);
    for (const e of this.events) {
      if (e.t > t) break;
      if (e.type === 'lifecycle') ranksAt.lifecycle(e);
      else if (e.type === 'finding') ranksAt.finding(e.finding);
      else if (e.type === 'round') {
        roundsCompleted += 1;
        lastRound = Math.max(lastRound, e.report.round);
      } else if (e.type === 'link') counters.declare(e.link);
      else if (e.type === 'links') links = e.links;
      else if (e.type === 'record') {
        counters.unit(e.record);
        ranksAt.unit(e.record);
      }
    }
    const states = ranksAt.states;
    const hosts: HostView[] = hostRanks.map((ranks, h) => ({
      host: h,
      name: hostName(h),
      ranks,
      // A host whose ranks have all gone, some of them by a clean exit, was stopped, not killed.
      state:
        ranksAt.hostDead[h] || (ranks.length > 0 && ranks.every((r) => states[r] === 'dead'))
          ? 'dead'
          : ranks.length > 0 && ranks.every((r) => states[r] === 'dead' || states[r] === 'exited')
            ? 'stopped'
            : 'up',
    }));
    const ranks: RankView[] = hostRanks.flatMap((rs, h) =>
      rs.map((rank) => ({ rank, host: h, state: states[rank]!, roundsCompleted })),
    );
    return {
      running: false,
      config,
      saltHex: this.header.saltHex,
      hosts,
      ranks,
      // The counters the session wrote win; without any, the records' lengths add up the same bytes.
      links: links ?? counters.snapshot(),
      round: lastRound + 1,
      roundsCompleted,
      roundsPaused: ranksAt.paused,
      startedAt: this.header.startedAt,
    };
  }
}

const REPLAY_HANDLERS: HandlerTable<'snapshot' | 'getRecordBytes', TraceReplay> = {
  snapshot: async (replay) => ({ ok: true, snapshot: replay.snapshotAt(replay.time) }),
  async getRecordBytes(replay, cmd) {
    const e = replay.recordEvent(cmd.seq);
    if (!e) return { ok: false, error: 'NOT_FOUND', message: `record ${cmd.seq} is not in this trace` };
    return {
      ok: true,
      bytes: {
        seq: cmd.seq,
        hex: Buffer.from(e.bytes).toString('hex'),
        length: e.record.length,
        captured: e.bytes.length,
        saltHex: replay.header.saltHex,
      },
      record: e.record,
    };
  },
};
