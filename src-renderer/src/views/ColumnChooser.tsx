// The record list's column chooser: which columns show; Info always shows
// and takes the width that is left. Until a choice is made the list picks
// by its own width (styles.css container queries); a choice is remembered.
import { useRef, useState, type CSSProperties } from 'react';
import { useUi } from '../store/ui-store';
import { useDismiss } from './popup-dismiss';

/** The list's columns in order (1-based, as the cells' nth-child), with their widths; Info last. */
export const RECORD_COLUMNS = [
  { n: 1, name: 'No.', width: '50px' },
  { n: 2, name: 'Time', width: '52px' },
  { n: 3, name: 'Link', width: '128px' },
  { n: 4, name: 'Dir', width: '18px' },
  { n: 5, name: 'Layer', width: '58px' },
  { n: 6, name: 'Kind', width: '96px' },
  { n: 7, name: 'Rank', width: '32px' },
  { n: 8, name: 'Length', width: '86px' },
  { n: 9, name: 'Verdict', width: '64px' },
] as const;

/** The grid columns for the chosen set: the shown columns' widths, then Info with the rest. */
export function columnTemplate(hidden: readonly number[]): string {
  const shown = RECORD_COLUMNS.filter((c) => !hidden.includes(c.n)).map((c) => c.width);
  return [...shown, 'minmax(120px, 1fr)'].join(' ');
}

/** What the records section carries for a choice: the grid template and the hidden columns. */
export function columnChoiceProps(hidden: readonly number[] | null): {
  className: string;
  style?: CSSProperties;
  'data-hide'?: string;
} {
  if (hidden === null) return { className: '' };
  return {
    className: 'cols-chosen',
    style: { ['--rec-cols' as string]: columnTemplate(hidden) } as CSSProperties,
    'data-hide': hidden.join(' '),
  };
}

export function ColumnChooser() {
  const hidden = useUi((s) => s.hiddenColumns);
  const [open, setOpen] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  useDismiss(ref, open, () => setOpen(false));
  const set = (n: number, show: boolean) => {
    const now = useUi.getState().hiddenColumns ?? [];
    const next = show ? now.filter((c) => c !== n) : [...now, n].sort((a, b) => a - b);
    useUi.getState().set({ hiddenColumns: next });
  };
  return (
    <div className="overflow-menu column-chooser" ref={ref}>
      <button
        type="button"
        aria-haspopup="true"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
        title="Choose the list's columns (Info takes the width left)"
      >
        Columns ▾
      </button>
      {open && (
        <fieldset className="overflow-items" aria-label="Columns shown">
          {RECORD_COLUMNS.map((c) => (
            <label key={c.n}>
              <input
                type="checkbox"
                checked={hidden === null || !hidden.includes(c.n)}
                onChange={(e) => set(c.n, e.target.checked)}
              />{' '}
              {c.name}
            </label>
          ))}
          <button type="button" onClick={() => useUi.getState().set({ hiddenColumns: null })}>
            Fit to width
          </button>
        </fieldset>
      )}
    </div>
  );
}
