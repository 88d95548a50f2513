// Traces from the window: save or export the live session, list and open
// saved traces (or upload one, where the transport can), scrub an open
// trace's timeline, and go back to live. What is shown comes from the lab's
// `view` events (apply-batch); this store only holds the dialog and the
// last save's outcome.
import { create } from 'zustand';
import type { LabApi, SavedTrace, TraceFileInfo, TraceStep } from '@shared/lab/contract';
import { send, useLab, selectAfterNextReset } from './lab-store';
import { useUi } from './ui-store';

/** A transport that can carry a file from the person's disk (browser mode's WebSocketLabApi). */
export interface TraceUploader {
  uploadTrace(file: Blob, name: string): Promise<string>;
}

export function canUpload(api: LabApi | null): api is LabApi & TraceUploader {
  return api !== null && typeof (api as Partial<TraceUploader>).uploadTrace === 'function';
}

export interface TraceState {
  dialogOpen: boolean;
  list: TraceFileInfo[] | null;
  busy: string | null;
  saved: SavedTrace | null;
  error: string | null;
}

export const useTraces = create<TraceState>(() => ({
  dialogOpen: false,
  list: null,
  busy: null,
  saved: null,
  error: null,
}));

export async function saveTrace(format: 'ndjson' | 'pcapng'): Promise<void> {
  useTraces.setState({ busy: format === 'ndjson' ? 'Saving trace…' : 'Exporting pcapng…', error: null });
  const reply = await send({ type: 'saveTrace', format });
  useTraces.setState(
    reply.ok
      ? { busy: null, saved: reply.trace ?? null }
      : { busy: null, error: `${reply.error}: ${reply.message}` },
  );
}

export async function openTraceDialog(): Promise<void> {
  useTraces.setState({ dialogOpen: true, error: null });
  const reply = await send({ type: 'listTraces' });
  useTraces.setState(
    reply.ok ? { list: reply.traces ?? [] } : { list: [], error: `${reply.error}: ${reply.message}` },
  );
}

export async function openTrace(name?: string): Promise<void> {
  useTraces.setState({ busy: 'Opening trace…', error: null });
  const reply = await send(name === undefined ? { type: 'openTrace' } : { type: 'openTrace', name });
  useTraces.setState(
    reply.ok ? { busy: null, dialogOpen: false } : { busy: null, error: `${reply.error}: ${reply.message}` },
  );
}

export async function uploadAndOpen(api: LabApi & TraceUploader, file: File): Promise<void> {
  useTraces.setState({ busy: `Uploading ${file.name}…`, error: null });
  try {
    const name = await api.uploadTrace(file, file.name);
    await openTrace(name);
  } catch (e) {
    useTraces.setState({ busy: null, error: e instanceof Error ? e.message : String(e) });
  }
}

// Scrubbing sends at most one seek at a time; the newest position wins.
let seekInFlight = false;
let pendingSeek: number | null = null;
export async function seekTrace(t: number): Promise<void> {
  pendingSeek = t;
  if (seekInFlight) return;
  seekInFlight = true;
  try {
    while (pendingSeek !== null) {
      const next = pendingSeek;
      pendingSeek = null;
      await send({ type: 'seekTrace', t: next });
    }
  } finally {
    seekInFlight = false;
  }
}

/**
 * Steps an open trace to the next/previous unit, round or finding. A unit
 * step selects the unit in the list (after the batch that brings it).
 */
export async function stepTrace(by: TraceStep, dir: 1 | -1): Promise<void> {
  if (seekInFlight) return;
  seekInFlight = true;
  try {
    const reply = await send({ type: 'stepTrace', by, dir });
    if (!reply.ok || reply.seq === undefined) return;
    const shown = useLab.getState().view;
    if (shown.kind === 'trace' && reply.view.kind === 'trace' && shown.t === reply.view.t) {
      // The batch came in before the reply: select now.
      const ui = useUi.getState();
      ui.set({ selectedSeq: reply.seq, selectedField: null, revealSeq: ui.revealSeq + 1 });
    } else selectAfterNextReset(reply.seq);
  } finally {
    seekInFlight = false;
  }
}

export async function backToLive(): Promise<void> {
  await send({ type: 'closeTrace' });
}

export const isViewingTrace = (): boolean => useLab.getState().view.kind === 'trace';
