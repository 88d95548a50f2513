// Completion for the records filter: the field names and values that fit
// what is being typed (the dissector's names and their values from the
// explanations table), as buttons that complete the filter text. Buttons,
// not a datalist: a list attribute would turn the filter box into a combobox.
import { FILTER_FIELDS } from '../lib/filter-language';
import { filterCompletions } from '../lib/wire-filter-fields';
import { useUi } from '../store/ui-store';
import './teach.css';

export function FilterCompletions({ text }: { text: string }) {
  const partial = /([A-Za-z_.]*)$/.exec(text)?.[1] ?? '';
  const head = text.slice(0, text.length - partial.length);
  const options = filterCompletions(text, FILTER_FIELDS).slice(0, 8);
  if (!options.length) return null;
  return (
    <div role="group" aria-label="Filter completions" className="filter-completions">
      {options.map((o) => (
        <button
          key={o}
          type="button"
          className="link mono"
          onClick={() => useUi.getState().set({ filterText: `${head}${o}` })}
        >
          {o}
        </button>
      ))}
    </div>
  );
}
