// Completion for the records filter: a datalist of the whole filter text with
// the field name or value being typed completed (the dissector's names and
// their values from the explanations table).
import { FILTER_FIELDS } from '../lib/filter-language';
import { filterCompletions } from '../lib/wire-filter-fields';

export const FILTER_COMPLETIONS_ID = 'filter-completions';

export function FilterCompletions({ text }: { text: string }) {
  const partial = /([A-Za-z_.]*)$/.exec(text)?.[1] ?? '';
  const head = text.slice(0, text.length - partial.length);
  const options = filterCompletions(text, FILTER_FIELDS).slice(0, 40);
  return (
    <datalist id={FILTER_COMPLETIONS_ID}>
      {options.map((o) => (
        <option key={o} value={`${head}${o}`} />
      ))}
    </datalist>
  );
}
