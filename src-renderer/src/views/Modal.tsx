// One shell for every modal dialog: the overlay that closes the dialog on a
// click outside it, the box that keeps its own clicks, (where the dialog asks
// for it) Escape, and the standard head (title, one line of what the dialog
// does, Close) with the error line under it. Each dialog used to write these itself.
import { useEffect, useRef, type ReactNode } from 'react';

export interface ModalProps {
  /** The dialog's accessible name (its heading's text). */
  label: string;
  /** The box's classes (`help` and the dialog's own). */
  className: string;
  onClose: () => void;
  /** Escape closes it too (dialogs whose Escape the global shortcuts do not handle). */
  closeOnEscape?: boolean;
  /** alertdialog for a question that must be answered (it interrupts an action). */
  role?: 'dialog' | 'alertdialog';
  /** With it, the standard head: the label as its title, this line, and Close. */
  subtitle?: ReactNode;
  /** Shown as an alert under the head. */
  error?: string | null;
  children: ReactNode;
}

export function Modal({
  label,
  className,
  onClose,
  closeOnEscape = false,
  role = 'dialog',
  subtitle,
  error,
  children,
}: ModalProps) {
  // The latest close, so the Escape listener is added once and never calls a stale one.
  const close = useRef(onClose);
  close.current = onClose;
  useEffect(() => {
    if (!closeOnEscape) return;
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && close.current();
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [closeOnEscape]);
  return (
    <div className="overlay" onClick={() => close.current()}>
      <div
        className={className}
        role={role}
        aria-modal="true"
        aria-label={label}
        onClick={(e) => e.stopPropagation()}
      >
        {subtitle !== undefined && (
          <header className="scenarios-head">
            <h2>{label}</h2>
            <span className="muted small">{subtitle}</span>
            <button type="button" className="push-right" onClick={() => close.current()}>
              Close
            </button>
          </header>
        )}
        {error && (
          <p className="bad" role="alert">
            {error}
          </p>
        )}
        {children}
      </div>
    </div>
  );
}
