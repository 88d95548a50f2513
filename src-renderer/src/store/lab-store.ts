// The lab's data as React sees it (zustand), fed once per animation frame
// from the transport. The records themselves stay in the ring.
import { create } from 'zustand';
import type {
  AnyCommand,
  CommandOf,
  LabApi,
  LabBatch,
  LabEvent,
  CompareRow,
  ReplyOf,
} from '@shared/lab/contract';
import { applyBatches, emptyLabData, type LabData } from './apply-batch';
import { RecordRing, ringCapacityOf } from './record-ring';
import type { UnitRecord } from '@shared/lab/records';
import type { ConnectionState } from '../bridge/ws-bridge';
import { useUi } from './ui-store';
import { sourceKey } from '../lib/source';

export interface LabStore extends LabData {
  connection: ConnectionState;
  /** `workload`: the topology the comparison ran (it is shown only under the same one). */
  compare: { busy: boolean; rows: CompareRow[] | null; error: string | null; workload?: string };
  lastError: string | null;
}

export const useLab = create<LabStore>(() => ({
  ...emptyLabData(),
  connection: 'connecting',
  compare: { busy: false, rows: null, error: null },
  lastError: null,
}));

/** The record buffer, outside React state. */
export const recordRing = new RecordRing(ringCapacityOf(globalThis.location?.search));

type RecordsListener = (records: UnitRecord[], reset: boolean) => void;
const recordsListeners = new Set<RecordsListener>();
/** Views that keep incremental structures over the ring (the filtered list) hear about each frame's new records. */
export function onNewRecords(fn: RecordsListener): () => void {
  recordsListeners.add(fn);
  return () => recordsListeners.delete(fn);
}

let api: LabApi | null = null;
let selectAfterReset: number | null = null;
/** Selects record `seq` when the next resetting batch (a trace step's) has been applied. */
export function selectAfterNextReset(seq: number | null): void {
  selectAfterReset = seq;
}
let queue: LabBatch[] = [];
let scheduled = false;

/** Applies every queued batch in one go: one React update per frame at most. */
export function flushBatches(now = performance.now()): void {
  scheduled = false;
  if (queue.length === 0) return;
  const batches = queue;
  queue = [];
  const { data, newRecords, reset } = applyBatches(useLab.getState(), batches, recordRing, now);
  // A new session numbers its records afresh: an old selection would point at the wrong one.
  // A trace step names the unit it stepped to: that one is selected once its batch is in.
  if (reset) {
    const seq = selectAfterReset;
    selectAfterReset = null;
    const ui = useUi.getState();
    ui.set(
      seq === null
        ? { selectedSeq: null, selectedField: null }
        : { selectedSeq: seq, selectedField: null, revealSeq: ui.revealSeq + 1 },
    );
  }
  for (const l of recordsListeners) l(newRecords, reset);
  // An error from a command sent to another source (a trace's OFFLINE, a killed session's) is not about this one.
  const before = useLab.getState();
  const sourceChanged = sourceKey(before.view, before.snapshot) !== sourceKey(data.view, data.snapshot);
  useLab.setState(sourceChanged ? { ...data, lastError: null } : data);
}

function scheduleFlush(): void {
  if (scheduled) return;
  scheduled = true;
  // requestAnimationFrame pauses in hidden tabs; the timeout keeps the queue short there.
  const raf = requestAnimationFrame(() => {
    clearTimeout(timer);
    flushBatches();
  });
  const timer = setTimeout(() => {
    cancelAnimationFrame(raf);
    flushBatches();
  }, 250);
}

/** The transport the window talks to (null before attachLab). */
export function currentLab(): LabApi | null {
  return api;
}

export function attachLab(lab: LabApi): () => void {
  api = lab;
  const unsubscribe = lab.subscribe((batch) => {
    queue.push(batch);
    scheduleFlush();
  });
  // Rank and host states also arrive as snapshot events; a slow poll is a
  // safety net so a missed event can never leave a stale state on screen.
  const poll = setInterval(() => void refreshSnapshot(), 1000);
  return () => {
    clearInterval(poll);
    unsubscribe();
  };
}

export function setConnection(state: ConnectionState): void {
  useLab.setState({ connection: state });
  if (state === 'open') queueMicrotask(() => void catchUp());
}

/**
 * On every (re)connect: the view, the snapshot and the recent records the
 * window missed, as one resetting batch, so a reload keeps its history.
 * Records that also arrive in live batches are kept once (by seq).
 */
async function catchUp(): Promise<void> {
  if (!api) return;
  const reply = await api.command({ type: 'recentRecords' });
  if (!reply.ok || !reply.snapshot) return void refreshSnapshot();
  const events: LabEvent[] = [];
  if (reply.view) events.push({ type: 'view', view: reply.view });
  // An open trace's state is on the trace's clock (its counters follow in the history).
  const t = reply.view?.kind === 'trace' ? reply.view.t : undefined;
  events.push({ type: 'snapshot', snapshot: reply.snapshot, reset: true, ...(t !== undefined ? { t } : {}) });
  if (reply.history) events.push(...reply.history);
  if (reply.records?.length) events.push({ type: 'records', records: reply.records, droppedBefore: 0 });
  queue.push({ events });
  scheduleFlush();
}

async function refreshSnapshot(): Promise<void> {
  if (!api || useLab.getState().connection !== 'open') return;
  const reply = await api.command({ type: 'snapshot' });
  if (reply.ok && reply.snapshot) {
    queue.push({ events: [{ type: 'snapshot', snapshot: reply.snapshot }] });
    scheduleFlush();
  }
}

/** Sends a command; a reply that carries a snapshot updates the view at once. */
export async function send<C extends AnyCommand>(cmd: C): Promise<ReplyOf<C['type']>> {
  if (!api) return { ok: false, error: 'NOT_CONNECTED', message: 'not connected to the lab' };
  const reply = await api.command(cmd);
  if (!reply.ok) useLab.setState({ lastError: `${cmd.type}: ${reply.error}: ${reply.message}` });
  else if ('snapshot' in reply && reply.snapshot && cmd.type !== 'snapshot') {
    queue.push({ events: [{ type: 'snapshot', snapshot: reply.snapshot }] });
    scheduleFlush();
  }
  return reply;
}

export async function runCompare(cmd: CommandOf<'compareModes'>): Promise<void> {
  const workload = cmd.config ? workloadKey(cmd.config) : undefined;
  useLab.setState({ compare: { busy: true, rows: null, error: null, workload } });
  const reply = await send(cmd);
  useLab.setState({
    compare: reply.ok
      ? { busy: false, rows: reply.compare ?? [], error: null, workload }
      : { busy: false, rows: null, error: `${reply.error}: ${reply.message}`, workload },
  });
}

/** What makes two comparisons comparable: hosts x ranks, model size and wire dtype. */
export function workloadKey(c: { ranksPerHost?: number[]; modelBytes?: number; dtype?: string }): string {
  return `${(c.ranksPerHost ?? []).join(',')}|${c.modelBytes ?? ''}|${c.dtype ?? ''}`;
}

export function clearRecords(): void {
  recordRing.clearKept();
  for (const l of recordsListeners) l([], true);
  useLab.setState((s) => ({ recordsVersion: s.recordsVersion + 1 }));
}
