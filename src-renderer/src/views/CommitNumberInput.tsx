// A number field that keeps what is typed and checks it only on commit
// (blur or Enter): a valid value goes to `onCommit`, a wrong one keeps its
// text and shows why beside the field. Nothing is clamped per keystroke.
import { useEffect, useId, useState } from 'react';

/** The whole number `text` means within [min, max], or why not. */
export function checkWhole(text: string, min: number, max: number, what: string): number | string {
  const t = text.trim();
  if (!/^\d+$/.test(t)) return `${what}: a whole number from ${min} to ${max}`;
  const n = Number(t);
  return n < min || n > max ? `${what}: ${n} is outside ${min} to ${max}` : n;
}

export function CommitNumberInput({
  label,
  value,
  min,
  max,
  onCommit,
  onError,
}: {
  label: string;
  value: number;
  min: number;
  max: number;
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
    const r = checkWhole(draft, min, max, label);
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
        title={`${min} to ${max}`}
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
