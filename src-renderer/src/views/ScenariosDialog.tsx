// Reproductions of the transport's historical bugs: pick one, run it; the lab
// runs it twice (the historical behaviour, then flodl 0.7's) beside the live
// session and shows both runs as pictures with their decisive units, the
// measures that decide the verdict, and what broke. "Your reproductions":
// Record, Save and Open reproduction files (ReproFilesPanel).
import { Modal } from './Modal';
import { useLab } from '../store/lab-store';
import { useScenarios, runPickedScenario } from '../store/scenario-store';
import { FILES_TAB } from '../store/repro-store';
import { measureRows, SCENARIO_NOTES } from '../lib/repro-measures';
import { ReproFilesPanel } from './ReproFilesPanel';
import { RunPictureView } from './RunPictureView';
import { formatDuration } from '../lib/format';

export function ScenariosDialog() {
  const { list, picked, running, result, error } = useScenarios();
  const logs = useLab((s) => s.logs);
  const close = () => useScenarios.setState({ open: false });
  const info = list?.find((s) => s.name === picked);
  const progress = running ? logs.filter((l) => l.message.startsWith(`scenario ${running}`)).slice(-6) : [];
  const shownResult = result && result.name === picked ? result : null;

  return (
    <Modal
      label="Reproductions"
      className="help scenarios"
      onClose={close}
      subtitle="each runs twice: the historical behaviour, then flodl 0.7's, on its own processes; the live session's rounds pause meanwhile and resume after"
    >
      <div className="scenarios-body">
        <ul className="scenario-list" aria-label="Scenarios">
          <li>
            <button
              type="button"
              aria-pressed={picked === FILES_TAB}
              aria-label="Your reproductions"
              disabled={running !== null}
              onClick={() => useScenarios.setState({ picked: FILES_TAB })}
            >
              Your reproductions: Record, Save, Open
            </button>
          </li>
          {!list && !error && <li className="muted">Loading…</li>}
          {list?.map((s) => (
            <li key={s.name}>
              <button
                type="button"
                aria-pressed={s.name === picked}
                aria-label={`scenario ${s.name}`}
                disabled={running !== null}
                onClick={() => useScenarios.setState({ picked: s.name })}
              >
                <span className="mono muted">{s.number}.</span> {s.title}
              </button>
            </li>
          ))}
        </ul>
        <div className="scenario-detail">
          {error && (
            <p className="bad" role="alert">
              {error}
            </p>
          )}
          {picked === FILES_TAB && <ReproFilesPanel />}
          {info && (
            <>
              <h3>
                {info.title} <span className="tag">{info.incident}</span>
              </h3>
              <p>{info.narrative}</p>
              {/* Lab-only behaviours are labelled wherever they appear (WIRE.md 7.5). */}
              <p className="small">Historical run: {info.historicalBehaviour}</p>
              <button
                type="button"
                className="primary"
                disabled={running !== null}
                onClick={() => void runPickedScenario()}
              >
                {running === info.name ? 'Running…' : 'Run reproduction'}
              </button>
            </>
          )}
          {progress.length > 0 && (
            <ul className="scenario-progress mono small" aria-label="Progress">
              {progress.map((l, i) => (
                <li key={i}>{l.message.replace(/^scenario \S+ /, '')}</li>
              ))}
            </ul>
          )}
          {shownResult && <ScenarioResultView result={shownResult} />}
        </div>
      </div>
    </Modal>
  );
}

function ScenarioResultView({
  result: r,
}: {
  result: NonNullable<ReturnType<typeof useScenarios.getState>['result']>;
}) {
  const notes = SCENARIO_NOTES[r.name];
  const rows = measureRows(r.historical.evidence, r.current.evidence);
  return (
    <section className="scenario-result" aria-label="Scenario result" data-verdict={r.verdict}>
      <p>
        Verdict: <strong className={r.verdict === 'ok' ? 'ok' : 'bad'}>{r.verdict}</strong>{' '}
        <span className="small">
          {r.verdict === 'ok'
            ? 'the bug reproduced with the historical behaviour and flodl 0.7 held'
            : r.verdict === 'not-reproduced'
              ? 'the historical run did not show the bug'
              : r.verdict === 'not-held'
                ? "flodl 0.7's run did not hold"
                : 'the reproduction could not run'}
        </span>
        <span className="muted small">
          {/* A run's duration is shown once, under its picture (its trace's span); without
              pictures, the side's wall time is the only one there is. */}
          {!r.pictures &&
            ` · wall time: historical ${formatDuration(r.timings.historicalMs)}, flodl 0.7 ${formatDuration(r.timings.currentMs)}`}{' '}
          · processes left alive {r.processes.leftAlive.length}
        </span>
      </p>
      {r.error && <p className="bad">{r.error}</p>}
      {notes && (
        <ul className="repro-lines small" aria-label="What broke">
          <li>
            <strong>What broke:</strong> {notes.broke}
          </li>
          <li>
            <strong>Why:</strong> {notes.why}
          </li>
          <li>
            <strong>Why flodl 0.7 holds:</strong> {notes.holds}
          </li>
        </ul>
      )}
      <div className="scenario-sides">
        <div aria-label="Historical run">
          <h4>
            Historical:{' '}
            <span className={r.historical.reproduced ? 'ok' : 'bad'}>
              {r.historical.reproduced ? 'reproduced' : 'not reproduced'}
            </span>
          </h4>
          {r.pictures && <RunPictureView picture={r.pictures.historical} label="historical" />}
        </div>
        <div aria-label="flodl 0.7 run">
          <h4>
            flodl 0.7:{' '}
            <span className={r.current.held ? 'ok' : 'bad'}>{r.current.held ? 'held' : 'did not hold'}</span>
          </h4>
          {r.pictures && <RunPictureView picture={r.pictures.current} label="flodl 0.7" />}
        </div>
      </div>
      <table className="measures" aria-label="Measures">
        <thead>
          <tr>
            <th>measure</th>
            <th>historical</th>
            <th>flodl 0.7</th>
            <th>what it means</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((m) => (
            <tr key={m.key} className={m.differs ? 'differs' : ''}>
              <td className="mono">{m.key}</td>
              <td className="mono">{m.historical}</td>
              <td className="mono">{m.current}</td>
              <td>{m.meaning}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
