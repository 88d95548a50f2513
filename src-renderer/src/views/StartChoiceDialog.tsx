// The question Start asks while a live session runs: its records would be
// wiped by the new topology, so the person picks Save trace first, Replace
// or Cancel. Saving is the first (and focused) choice: losing nothing is the default.
import { Modal } from './Modal';
import { useLab } from '../store/lab-store';
import { chooseStart, useStartChoice } from '../store/start-topology';
import { formatInt } from '../lib/format';

export function StartChoiceDialog() {
  const { pending, busy, error } = useStartChoice();
  const rounds = useLab((s) => s.snapshot?.roundsCompleted ?? 0);
  const ranks = useLab((s) => s.snapshot?.ranks.length ?? 0);
  if (!pending) return null;
  const hosts = pending.ranksPerHost ?? [];
  const next = `${hosts.length} x ${hosts[0] ?? '?'}${hosts.every((k) => k === hosts[0]) ? '' : ' (uneven)'} ${pending.mode ?? ''}`;
  return (
    <Modal
      label="A session is running"
      className="help"
      role="alertdialog"
      onClose={() => void chooseStart('cancel')}
      closeOnEscape
    >
      <h2>A session is running</h2>
      <p>
        The live session ({ranks} ranks, {formatInt(rounds)} rounds done) would be replaced by the new
        topology ({next.trim()}), and its records with it.
      </p>
      {error && (
        <p className="bad" role="alert">
          {error}
        </p>
      )}
      {busy && <p className="muted">{busy}</p>}
      <div className="choice-actions">
        <button
          type="button"
          className="primary"
          autoFocus
          disabled={busy !== null}
          onClick={() => void chooseStart('save-and-replace')}
        >
          Save trace first, then start
        </button>
        <button type="button" disabled={busy !== null} onClick={() => void chooseStart('replace')}>
          Replace without saving
        </button>
        <button type="button" disabled={busy !== null} onClick={() => void chooseStart('cancel')}>
          Cancel
        </button>
      </div>
    </Modal>
  );
}
