// Start from the New topology form: commit what was typed, and start only
// the topology the fields show. A wrong field stays on screen with its error
// beside it (the form opens to show it) and nothing starts. A running live
// session is never replaced silently: Start (button or Ctrl+Enter) asks
// first, Save trace first / Replace / Cancel, as Explore does before a sweep.
import { create } from 'zustand';
import type { TopologyConfig } from '@shared/lab/topology';
import { configForStart, commitDrafts, type TypedField } from '../lib/form-fields';
import { send, useLab } from './lab-store';
import { useUi } from './ui-store';

export interface StartChoiceState {
  /** The checked config waiting for the person's choice (a live session runs); null: no question open. */
  pending: Partial<TopologyConfig> | null;
  /** What the choice is doing now (saving can take a while on a long session). */
  busy: string | null;
  error: string | null;
}

export const useStartChoice = create<StartChoiceState>(() => ({ pending: null, busy: null, error: null }));

export type StartChoice = 'save-and-replace' | 'replace' | 'cancel';

/** Commits one field's draft (blur or Enter). */
export function commitField(field: TypedField): void {
  const ui = useUi.getState();
  const c = commitDrafts(ui.form, ui.formDrafts, ui.formErrors, [field]);
  ui.set({ form: c.form, formDrafts: c.drafts, formErrors: c.errors });
}

/** Keeps what is typed as a draft: nothing is checked or clamped per keystroke. */
export function typeField(field: TypedField, text: string): void {
  const ui = useUi.getState();
  ui.set({ formDrafts: { ...ui.formDrafts, [field]: text } });
}

/** A live session whose records a new Start would wipe (a trace on screen leaves the live one alone). */
export function liveSessionRunning(): boolean {
  const lab = useLab.getState();
  return lab.view.kind === 'live' && (lab.snapshot?.running ?? false);
}

/**
 * Start: returns false (and shows why beside the fields) when the form does
 * not hold a valid topology, and false while the person is asked what to do
 * with the running session (their choice starts it, see chooseStart).
 */
export async function startFromForm(): Promise<boolean> {
  if (useStartChoice.getState().pending) return false;
  const ui = useUi.getState();
  const c = configForStart(ui.form, ui.formDrafts, ui.formErrors);
  ui.set({ form: c.form, formDrafts: c.drafts, formErrors: c.errors });
  if (!c.config) {
    document.querySelector<HTMLDetailsElement>('details.new-topology')?.setAttribute('open', '');
    return false;
  }
  if (liveSessionRunning()) {
    useStartChoice.setState({ pending: c.config, busy: null, error: null });
    return false;
  }
  const reply = await send({ type: 'start', config: c.config });
  return reply.ok;
}

/** The person's answer to "a session is running": the trace is saved before anything is replaced. */
export async function chooseStart(choice: StartChoice): Promise<boolean> {
  const { pending, busy } = useStartChoice.getState();
  if (!pending || busy) return false;
  if (choice === 'cancel') {
    useStartChoice.setState({ pending: null, error: null });
    return false;
  }
  if (choice === 'save-and-replace') {
    useStartChoice.setState({ busy: 'Saving the live session…', error: null });
    const saved = await send({ type: 'saveTrace', format: 'ndjson' });
    if (!saved.ok) {
      // Nothing is replaced when the save failed: the session is still there to retry or keep.
      useStartChoice.setState({ busy: null, error: `could not save the live session: ${saved.message}` });
      return false;
    }
  }
  useStartChoice.setState({ busy: 'Starting…' });
  const reply = await send({ type: 'start', config: pending });
  useStartChoice.setState(
    reply.ok
      ? { pending: null, busy: null, error: null }
      : { busy: null, error: `could not start: ${reply.message}` },
  );
  return reply.ok;
}
