// Run controls: start a topology (from the form in the topology panel),
// stop, pause and step rounds, speed; theme and help.
import { useLab, send } from '../store/lab-store';
import { useUi, formToConfig } from '../store/ui-store';
import { formatInt } from '../lib/format';
import { openScenarios } from '../store/scenario-store';
import { TraceButtons } from './TracesView';
import { GlossaryButton } from './GlossaryDrawer';
import { TourButton } from './TourPanel';

const SPEEDS = [0, 50, 100, 250, 500, 1000, 2000];

export function Toolbar() {
  const snapshot = useLab((s) => s.snapshot);
  const connection = useLab((s) => s.connection);
  const theme = useUi((s) => s.theme);
  const viewingTrace = useLab((s) => s.view.kind === 'trace');
  const running = (snapshot?.running ?? false) && !viewingTrace;
  const paused = snapshot?.roundsPaused ?? false;
  const interval = snapshot?.config.roundIntervalMs ?? 250;

  return (
    <header className="toolbar" role="toolbar" aria-label="Run controls">
      <span className="brand">Relay Lab</span>
      <button
        type="button"
        className="primary"
        onClick={() => void send({ type: 'start', config: formToConfig(useUi.getState().form) })}
        title="Start a topology from the form (Ctrl+Enter)"
        disabled={viewingTrace}
      >
        Start
      </button>
      <button type="button" onClick={() => void send({ type: 'stop' })} disabled={!running}>
        Stop
      </button>
      <button
        type="button"
        onClick={() => void send({ type: paused ? 'resumeRounds' : 'pauseRounds' })}
        disabled={!running}
        title="Pause or resume rounds (R)"
      >
        {paused ? 'Resume rounds' : 'Pause rounds'}
      </button>
      <button
        type="button"
        onClick={() => void send({ type: 'stepRound' })}
        disabled={!running || !paused}
        title="Run one round (.)"
      >
        Step round
      </button>
      <label className="speed">
        Interval
        <select
          aria-label="Round interval"
          value={SPEEDS.includes(interval) ? interval : ''}
          onChange={(e) => void send({ type: 'setSpeed', roundIntervalMs: Number(e.target.value) })}
          disabled={!running}
        >
          {!SPEEDS.includes(interval) && <option value="">{interval} ms</option>}
          {SPEEDS.map((ms) => (
            <option key={ms} value={ms}>
              {ms === 0 ? 'full speed' : `${ms} ms`}
            </option>
          ))}
        </select>
      </label>
      <div className="status" aria-live="polite">
        <span className={`dot ${connection}`} title={`connection ${connection}`} />
        {snapshot ? (
          <>
            <span>{running ? (paused ? 'rounds paused' : 'running') : 'stopped'}</span>
            <span className="mono" aria-label="Rounds completed">
              round {formatInt(snapshot.roundsCompleted)}
            </span>
          </>
        ) : (
          <span>{connection === 'open' ? 'waiting for the lab…' : connection}</span>
        )}
      </div>
      <TraceButtons />
      <button
        type="button"
        onClick={() => void openScenarios()}
        title="Reproductions of the transport's historical bugs"
      >
        Reproductions
      </button>
      <button
        type="button"
        onClick={() => useUi.getState().set({ theme: theme === 'dark' ? 'light' : 'dark' })}
        title="Toggle theme (T)"
      >
        {theme === 'dark' ? 'Light theme' : 'Dark theme'}
      </button>
      <button
        type="button"
        onClick={() => useUi.getState().set({ helpOpen: true })}
        title="Keyboard shortcuts (?)"
      >
        Shortcuts
      </button>
      <GlossaryButton />
      <TourButton />
    </header>
  );
}
