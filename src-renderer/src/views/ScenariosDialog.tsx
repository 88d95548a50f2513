// Reproductions of the transport's historical bugs: pick one, run it; the lab
// runs it twice (the historical behaviour, then flodl 0.7's) and shows the
// verdict with its evidence.
import { useLab } from '../store/lab-store';
import { useScenarios, runPickedScenario } from '../store/scenario-store';

export function ScenariosDialog() {
  const { list, picked, running, result, error } = useScenarios();
  const logs = useLab((s) => s.logs);
  const close = () => useScenarios.setState({ open: false });
  const info = list?.find((s) => s.name === picked);
  const progress = running ? logs.filter((l) => l.message.startsWith(`scenario ${running}`)).slice(-6) : [];
  const shownResult = result && result.name === picked ? result : null;

  return (
    <div className="overlay" onClick={close}>
      <div
        className="help scenarios"
        role="dialog"
        aria-modal="true"
        aria-label="Reproductions"
        onClick={(e) => e.stopPropagation()}
      >
        <header className="scenarios-head">
          <h2>Reproductions</h2>
          <span className="muted small">
            each runs twice: the historical behaviour, then flodl 0.7&apos;s; running one stops the current
            topology
          </span>
          <button type="button" className="push-right" onClick={close}>
            Close
          </button>
        </header>
        <div className="scenarios-body">
          <ul className="scenario-list" aria-label="Scenarios">
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
      </div>
    </div>
  );
}

function ScenarioResultView({
  result: r,
}: {
  result: NonNullable<ReturnType<typeof useScenarios.getState>['result']>;
}) {
  return (
    <section className="scenario-result" aria-label="Scenario result" data-verdict={r.verdict}>
      <p>
        Verdict: <strong className={r.verdict === 'ok' ? 'ok' : 'bad'}>{r.verdict}</strong>
        <span className="muted small">
          {' '}
          · historical {r.timings.historicalMs.toFixed(0)} ms · current {r.timings.currentMs.toFixed(0)} ms ·
          processes left alive {r.processes.leftAlive.length}
        </span>
      </p>
      {r.error && <p className="bad">{r.error}</p>}
      <div className="scenario-sides">
        <div>
          <h4>
            Historical:{' '}
            <span className={r.historical.reproduced ? 'ok' : 'bad'}>
              {r.historical.reproduced ? 'reproduced' : 'not reproduced'}
            </span>
          </h4>
          <pre className="mono small">{JSON.stringify(r.historical.evidence, null, 2)}</pre>
        </div>
        <div>
          <h4>
            flodl 0.7:{' '}
            <span className={r.current.held ? 'ok' : 'bad'}>{r.current.held ? 'held' : 'did not hold'}</span>
          </h4>
          <pre className="mono small">{JSON.stringify(r.current.evidence, null, 2)}</pre>
        </div>
      </div>
    </section>
  );
}
