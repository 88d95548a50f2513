// A number field that keeps what is typed and checks it only on commit
// (blur or Enter): a valid value goes to `onCommit`, a wrong one keeps its
// text and shows why beside the field. Nothing is clamped per keystroke.
// The range and the words are the lab's one table (src-shared/lab/number-ranges.ts),
// the command line's too: `--latency-ms` and this field refuse the same values alike.
import { useEffect, useId, useState } from 'react';
import { checkNumber, rangeText, type NumberRange } from '@shared/lab/number-ranges';

/** The number `text` means within `range`, or why not. */
export function checkRanged(text: string, range: NumberRange, what: string): number | string {
  const r = checkNumber(range, text, what);
  return r.ok ? r.value : r.error;
}

/** The whole number `text` means within [min, max], or why not. */
export function checkWhole(text: string, min: number, max: number, what: string): number | string {
  return checkRanged(text, { kind: 'int', min, max }, what);
}

export function CommitNumberInput({
  label,
  value,
  range,
  onCommit,
  onError,
}: {
  label: string;
  value: number;
  range: NumberRange;
  onCommit: (v: number) => void;
  /** Told whether the field holds a refused value (a form can hold its action back meanwhile). */
  onError?: (error: string | null) => void;
}) {
  const [draft, setDraft] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  // A value set from outside (a new fault kind's defaults) replaces any draft.
  useEffect(() => {
    setDraft(null);
    setError(null);
    onError?.(null);
  }, [value]);
  const commit = () => {
    if (draft === null) return;
    const r = checkRanged(draft, range, label);
    if (typeof r === 'string') {
      setError(r);
      onError?.(r);
      return;
    }
    setDraft(null);
    setError(null);
    onError?.(null);
    onCommit(r);
  };
  return (
    <label>
      {label}
      <input
        type="text"
        inputMode="numeric"
        spellCheck={false}
        title={rangeText(range)}
        value={draft ?? String(value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? id : undefined}
        onChange={(e) => setDraft(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => e.key === 'Enter' && commit()}
      />
      {error && (
        <span id={id} className="field-error" role="alert">
          {error}
        </span>
      )}
    </label>
  );
}
