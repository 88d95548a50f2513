// One shell for every modal dialog: the overlay that closes the dialog on a
// click outside it, the box that keeps its own clicks, Escape, the focus moved
// in, kept in on Tab and given back on close (dialog-layers.ts), and the
// standard head (title, one line of what the dialog does, Close) with the
// error line under it. Each dialog used to write these itself.
import { useRef, type ReactNode } from 'react';
import { useLayer } from './dialog-layers';

export interface ModalProps {
  /** The dialog's accessible name (its heading's text). */
  label: string;
  /** The box's classes (`help` and the dialog's own). */
  className: string;
  onClose: () => void;
  /** Kept for the callers that said so: every modal closes on Escape now (dialog-layers.ts). */
  closeOnEscape?: boolean;
  /** alertdialog for a question that must be answered (it interrupts an action). */
  role?: 'dialog' | 'alertdialog';
  /** With it, the standard head: the label as its title, this line, and Close. */
  subtitle?: ReactNode;
  /** Shown as an alert under the head. */
  error?: string | null;
  children: ReactNode;
}

export function Modal({ label, className, onClose, role = 'dialog', subtitle, error, children }: ModalProps) {
  // The latest close, so a click on the overlay never calls a stale one.
  const close = useRef(onClose);
  close.current = onClose;
  const box = useRef<HTMLDivElement>(null);
  // Focus in, Escape, Tab kept inside, focus back on close: the one mechanism every layer uses.
  useLayer(box, true, () => close.current(), true);
  return (
    <div className="overlay" onClick={() => close.current()}>
      <div
        ref={box}
        className={className}
        role={role}
        aria-modal="true"
        aria-label={label}
        tabIndex={-1}
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
