import { Modal } from './Modal';
import { useUi } from '../store/ui-store';
import { SHORTCUTS } from './shortcuts';
import { FILTER_FIELDS } from '../lib/filter-language';

export function HelpOverlay() {
  const close = () => useUi.getState().set({ helpOpen: false });
  return (
    <Modal label="Keyboard shortcuts" className="help" onClose={close}>
      <h2>Keyboard shortcuts</h2>
      <table>
        <tbody>
          {SHORTCUTS.map((s) => (
            <tr key={s.keys}>
              <td>
                <kbd>{s.keys}</kbd>
              </td>
              <td>{s.what}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Filter language</h3>
      <p className="mono small">
        kind == HostFrame &amp;&amp; host == h1 · rank == 3 · verdict != ok · len &gt; 1000 or short · not
        (dir == down)
      </p>
      <p className="small muted">
        Fields: {FILTER_FIELDS.join(', ')}. Operators: == != &lt; &lt;= &gt; &gt;= contains, and/&amp;&amp;,
        or/||, not/!.
      </p>
      <button type="button" onClick={close} autoFocus>
        Close
      </button>
    </Modal>
  );
}
