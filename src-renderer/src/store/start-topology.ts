// Start from the New topology form: commit what was typed, and start only
// the topology the fields show. A wrong field stays on screen with its error
// beside it (the form opens to show it) and nothing starts.
import { configForStart, commitDrafts, type TypedField } from '../lib/form-fields';
import { send } from './lab-store';
import { useUi } from './ui-store';

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

/** Start: returns false (and shows why beside the fields) when the form does not hold a valid topology. */
export async function startFromForm(): Promise<boolean> {
  const ui = useUi.getState();
  const c = configForStart(ui.form, ui.formDrafts, ui.formErrors);
  ui.set({ form: c.form, formDrafts: c.drafts, formErrors: c.errors });
  if (!c.config) {
    document.querySelector<HTMLDetailsElement>('details.new-topology')?.setAttribute('open', '');
    return false;
  }
  const reply = await send({ type: 'start', config: c.config });
  return reply.ok;
}
