// Reproductions as files in the window (issue 12): Record the live session's
// actions, draft the file (editable), save it, open one and replay it with
// the same pictures as the built-ins; and Inspect, which opens a run's trace
// at its decisive unit. The lab host does the work (repro-commands.ts).
import { create } from 'zustand';
import type { SavedTrace } from '@shared/lab/contract';
import type { ReproRecordingState, ReproRunView, RunPicture } from '@shared/repro/picture';
import { recordRing, send, useLab } from './lab-store';
import { revealRecord } from './reveal-record';
import { openScenarios, useScenarios } from './scenario-store';
import { openTrace, useTraces } from './trace-store';

export interface ReproState {
  recording: ReproRecordingState | null;
  /** The drafted (and possibly edited) file text. */
  draft: string | null;
  saved: SavedTrace | null;
  run: ReproRunView | null;
  /** What is busy: 'drafting', 'saving', 'running', 'inspecting'. */
  busy: string | null;
  error: string | null;
}

export const useRepro = create<ReproState>(() => ({
  recording: null,
  draft: null,
  saved: null,
  run: null,
  busy: null,
  error: null,
}));

const failure = (r: { error: string; message: string }) => `${r.error}: ${r.message}`;

export async function setRecording(on: boolean): Promise<void> {
  const reply = await send({ type: 'reproRecord', on });
  useRepro.setState(reply.ok ? { recording: reply.recording, error: null } : { error: failure(reply) });
}

/** The query in flight, if any: a poll while one is unanswered joins it instead of sending another. */
let refreshing: Promise<void> | null = null;

/**
 * Refreshes the captured count (read-only: never turns Record on or off). The Record button polls it
 * every second; a host busy for a minute (a replay) must not collect sixty queries (issue 30 item 9).
 */
export function refreshRecording(): Promise<void> {
  refreshing ??= send({ type: 'reproRecord' })
    .then((reply) => {
      if (reply.ok) useRepro.setState({ recording: reply.recording });
    })
    .finally(() => (refreshing = null));
  return refreshing;
}

export async function draftReproduction(): Promise<void> {
  useRepro.setState({ busy: 'drafting', error: null, saved: null });
  const reply = await send({ type: 'draftRepro' });
  useRepro.setState(
    reply.ok
      ? { busy: null, draft: reply.text, recording: reply.recording }
      : { busy: null, error: failure(reply) },
  );
  // The dialog opens on its files entry; its list of historical reproductions loads as when it is
  // opened from the toolbar (opened only from here, it read "Loading…" for good).
  useScenarios.setState({ picked: FILES_TAB });
  await openScenarios();
}

export async function saveReproduction(text: string): Promise<void> {
  useRepro.setState({ busy: 'saving', error: null });
  const reply = await send({ type: 'saveRepro', text });
  useRepro.setState(
    reply.ok ? { busy: null, saved: reply.file, draft: text } : { busy: null, error: failure(reply) },
  );
}

/** Replays a file's text headless beside the live session (which is paused meanwhile, then resumed). */
export async function runReproduction(text: string): Promise<void> {
  useRepro.setState({ busy: 'running', error: null, run: null, draft: text });
  const reply = await send({ type: 'runRepro', text });
  useRepro.setState(reply.ok ? { busy: null, run: reply.run } : { busy: null, error: failure(reply) });
}

export async function openReproductionFile(file: Blob): Promise<void> {
  await runReproduction(await file.text());
}

/** The Reproductions dialog's entry for files (Record / Save / Open) in its list. */
export const FILES_TAB = '__files__';

/**
 * Inspect: opens the run's trace in the main window, scrubbed to its decisive
 * unit, and selects that unit (its bytes in the hex pane).
 */
export async function inspectRun(p: RunPicture): Promise<void> {
  if (!p.trace || !p.decisive) return;
  const { seq, t } = p.decisive;
  useRepro.setState({ busy: 'inspecting', error: null });
  await openTrace(p.trace);
  const err = useTraces.getState().error;
  if (err) {
    useRepro.setState({ busy: null, error: err });
    return;
  }
  const wait = async (done: () => boolean) => {
    // (A loaded machine may take seconds to deliver a long trace's batch: wait up to a minute.)
    for (let i = 0; i < 2400 && !done(); i++) await new Promise((r) => setTimeout(r, 25));
  };
  const view = () => {
    const v = useLab.getState().view;
    return v.kind === 'trace' && v.name === p.trace ? v : null;
  };
  // The open shows the trace at its end; then scrub to just after the decisive unit, unless that is
  // the end already. Each batch resets the stores (and the selection): select after the last one.
  await wait(() => view() !== null);
  const opened = view();
  const at = opened ? Math.min(t + 1, opened.duration) : t + 1;
  if (!opened || Math.abs(opened.t - at) > 1e-6) {
    await send({ type: 'seekTrace', t: at });
    await wait(() => {
      const v = view();
      return v !== null && Math.abs(v.t - at) < 1e-6;
    });
  }
  await wait(() => !!recordRing.findBySeq(seq));
  useScenarios.setState({ open: false });
  const mark = p.decisive.mark;
  // The person's filter is set aside only if it hides the decisive unit, and comes back on Back to live.
  revealRecord(seq, { markedBytes: mark && mark.length > 0 ? { seq, ...mark } : null });
  useRepro.setState({ busy: null });
}
