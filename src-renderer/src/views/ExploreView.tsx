// Explore: a sweep of topologies x modes on real processes, from the window.
// The same choices as `relay-lab sweep`, a progress bar and Cancel, then the
// cases as a table and two charts (theory as lines), and one sentence on the
// fold's time benefit. A click on a case opens its trace; results save as
// JSON and CSV and a saved sweep opens again here.
import { Modal } from './Modal';
import type { UplinkMode } from '@shared/lab/topology';
import { foldBenefit } from '@shared/sweep/summary';
import type { SweepCase, SweepResult } from '@shared/sweep/types';
import { slowestStage, stageMedians } from '@shared/lab/round-stages';
import { predictionLine } from '@shared/model/validate-case';
import { formatBytes } from '../lib/format';
import { useLab } from '../store/lab-store';
import { useUi } from '../store/ui-store';
import {
  cancelSweep,
  openCaseTrace,
  openSavedSweep,
  saveSweep,
  startSweep,
  useExplore,
  type ExploreForm,
} from '../store/explore-store';
import { ExploreChart, MODE_COLOURS } from './ExploreCharts';
import { BeyondView } from './BeyondView';
import { ExploreWhyNotK } from './ExploreWhyNotK';
import './explore.css';

const MODES: UplinkMode[] = ['fold', 'forward', 'direct'];

export function ExploreView() {
  const s = useExplore();
  const theme = useUi((u) => u.theme);
  const liveRunning = useLab((l) => l.view.kind === 'live' && (l.snapshot?.running ?? false));
  const close = () => useExplore.setState({ open: false });
  const setForm = (patch: Partial<ExploreForm>) => useExplore.setState({ form: { ...s.form, ...patch } });
  const shown: SweepResult | null =
    s.result ??
    (s.partial.length > 0 && s.progress
      ? {
          format: 'relay-lab-sweep',
          version: 1,
          spec: specOfForm(s),
          startedAt: '',
          finishedAt: '',
          casesPlanned: s.progress.total,
          complete: false,
          cases: s.partial,
        }
      : null);
  const pct = s.progress && s.progress.total > 0 ? Math.round((100 * s.progress.done) / s.progress.total) : 0;
  const sentence = shown ? foldBenefit(shown) : null;

  return (
    <Modal
      label="Explore topologies"
      className="help explore"
      onClose={close}
      subtitle="every topology x mode runs for real, one after another, on its own processes and sockets"
    >
      <div role="tablist" aria-label="Explore" className="explore-tabs">
        {(
          [
            ['sweep', 'This machine'],
            ['beyond', 'Beyond this machine'],
          ] as const
        ).map(([tab, label]) => (
          <button
            key={tab}
            type="button"
            role="tab"
            aria-selected={s.tab === tab}
            className={s.tab === tab ? 'active' : ''}
            onClick={() => useExplore.setState({ tab })}
          >
            {label}
          </button>
        ))}
      </div>
      {s.tab === 'beyond' ? (
        <BeyondView theme={theme} />
      ) : (
        <>
          <form
            className="explore-form"
            onSubmit={(e) => {
              e.preventDefault();
              void startSweep();
            }}
          >
            <label>
              Topologies
              <input
                aria-label="Topologies"
                value={s.form.topologies}
                onChange={(e) => setForm({ topologies: e.target.value })}
                title="hosts x ranks (2x4) or ranks of each host (4+2+1), comma-separated"
              />
            </label>
            <fieldset>
              <legend>Modes</legend>
              {MODES.map((m) => (
                <label key={m} className="check">
                  <input
                    type="checkbox"
                    aria-label={`mode ${m}`}
                    checked={s.form.modes[m]}
                    onChange={(e) => setForm({ modes: { ...s.form.modes, [m]: e.target.checked } })}
                  />
                  {m}
                  {m !== 'fold' && <span className="tag">lab-only</span>}
                </label>
              ))}
            </fieldset>
            <label>
              Model
              <input
                aria-label="Model size"
                value={s.form.modelBytes}
                onChange={(e) => setForm({ modelBytes: e.target.value })}
              />
            </label>
            <label>
              Dtype
              <select
                aria-label="Dtype"
                value={s.form.dtype}
                onChange={(e) => setForm({ dtype: e.target.value as ExploreForm['dtype'] })}
              >
                <option value="f32">f32</option>
                <option value="bf16">bf16</option>
              </select>
            </label>
            <label>
              Rounds
              <input
                aria-label="Rounds"
                inputMode="numeric"
                value={s.form.rounds}
                onChange={(e) => setForm({ rounds: e.target.value })}
              />
            </label>
            <label>
              Warm-up
              <input
                aria-label="Warm-up rounds"
                placeholder="auto"
                value={s.form.warmupRounds}
                onChange={(e) => setForm({ warmupRounds: e.target.value })}
                title="rounds run first in each case and left out of its figures (JIT compilation and cold buffers make a case's first rounds 3-5x slower): a number, or auto (until the lab's code is compiled: 2 to 40 rounds, at most 3 s)"
              />
            </label>
            <label>
              Uplink MB/s
              <input
                aria-label="Uplink bandwidth MB/s"
                placeholder="unshaped"
                value={s.form.bandwidthMBps}
                onChange={(e) => setForm({ bandwidthMBps: e.target.value })}
                title="each host uplink, each direction, one rate shared by the host's connections (empty: loopback speed)"
              />
            </label>
            <label>
              Latency ms
              <input
                aria-label="Uplink latency ms"
                placeholder="0"
                value={s.form.latencyMs}
                onChange={(e) => setForm({ latencyMs: e.target.value })}
              />
            </label>
            {liveRunning && (
              <fieldset>
                <legend>Live topology</legend>
                <label className="check">
                  <input
                    type="radio"
                    name="live"
                    aria-label="Save the live session, then stop it"
                    checked={s.live === 'save-and-stop'}
                    onChange={() => useExplore.setState({ live: 'save-and-stop' })}
                  />
                  save its trace, then stop it
                </label>
                <label className="check">
                  <input
                    type="radio"
                    name="live"
                    aria-label="Keep the live session running"
                    checked={s.live === 'keep'}
                    onChange={() => useExplore.setState({ live: 'keep' })}
                  />
                  keep it running (it shares the cores: round times skew)
                </label>
              </fieldset>
            )}
            <div className="explore-actions">
              <button type="submit" className="primary" disabled={s.running}>
                {s.savingLive ? 'Saving…' : s.running ? 'Running…' : 'Run sweep'}
              </button>
              {/* Cancel stops a sweep; while the live session is still being saved there is none yet. */}
              <button type="button" onClick={() => void cancelSweep()} disabled={!s.running || s.savingLive}>
                Cancel
              </button>
              <button type="button" onClick={() => void saveSweep('json')} disabled={s.running || !s.result}>
                Save JSON
              </button>
              <button type="button" onClick={() => void saveSweep('csv')} disabled={s.running || !s.result}>
                Save CSV
              </button>
              <select
                aria-label="Open a saved sweep"
                value=""
                disabled={s.running || s.saved.length === 0}
                onChange={(e) => e.target.value && void openSavedSweep(e.target.value)}
              >
                <option value="">{s.saved.length ? 'Open a saved sweep…' : 'no saved sweeps'}</option>
                {s.saved.map((f) => (
                  <option key={f.name} value={f.name}>
                    {f.name}
                  </option>
                ))}
              </select>
            </div>
          </form>
          {s.progress && (s.running || s.progress.state !== 'done') && (
            <div className="explore-progress" aria-label="Sweep progress">
              <progress max={100} value={pct} aria-label="Cases done" />
              <span className="small mono">
                {s.progress.done}/{s.progress.total} cases
                {s.progress.current ? ` · running ${s.progress.current}` : ''}
                {s.progress.state === 'cancelled' ? ' · cancelled, finished cases kept' : ''}
              </span>
            </div>
          )}
          {s.error && (
            <p className="bad" role="alert">
              {s.error}
            </p>
          )}
          {s.savingLive && (
            <p className="muted" role="status" aria-label="Saving the live session">
              Saving the live session before the sweep stops it…
            </p>
          )}
          {s.liveNotice && <p className="muted small">{s.liveNotice.text}</p>}
          {s.notice && <p className="muted small">{s.notice}</p>}
          {s.savedAs && !s.running && <p className="muted small">Sweep saved as {s.savedAs}</p>}
          {shown && (
            <>
              <div className="explore-charts">
                <figure>
                  <figcaption>Data bytes per host uplink per round (busiest host)</figcaption>
                  <ExploreChart spec={shown.spec} cases={shown.cases} kind="bytes" theme={theme} />
                </figure>
                <figure>
                  <figcaption>
                    Median round time: measured, theory (uplink alone) and predicted (rings)
                  </figcaption>
                  <ExploreChart spec={shown.spec} cases={shown.cases} kind="time" theme={theme} />
                </figure>
                {sentence && (
                  <p className="explore-sentence" aria-label="Fold time benefit">
                    {sentence}
                  </p>
                )}
                <ExploreWhyNotK result={shown} />
              </div>
              <CaseTable cases={shown.cases} />
            </>
          )}
        </>
      )}
    </Modal>
  );
}

function specOfForm(s: ReturnType<typeof useExplore.getState>) {
  // The running sweep's choices, for the charts before the result arrives; the cases name their topologies.
  const topologies: number[][] = [];
  for (const c of s.partial)
    if (!topologies.some((t) => t.join('+') === c.ranksPerHost.join('+'))) topologies.push(c.ranksPerHost);
  const modes = MODES.filter((m) => s.form.modes[m]);
  return { topologies, modes, modelBytes: 0, dtype: s.form.dtype, rounds: 0 };
}

function hostsText(xs: number[]): string {
  if (xs.length === 0) return '–';
  return xs.every((x) => x === xs[0]) ? formatBytes(xs[0]) : xs.map(formatBytes).join(' / ');
}

/** The round's longest stage, with every stage's median in its title (absent in older saved sweeps). */
function StageCell({ c }: { c: SweepCase }) {
  const top = slowestStage(c.stages);
  if (!top) return <td className="muted">–</td>;
  const all = stageMedians(c.stages).map((m) => `${m.stage} ${m.ms.toFixed(2)} ms`);
  return (
    <td className="stage" title={`where a round goes (medians): ${all.join(', ')}`}>
      {top.stage} {top.ms.toFixed(1)}
    </td>
  );
}

/** The model's round beside the measured one: ms, error, and where a miss went wrong (title). */
function PredictedCell({ c }: { c: SweepCase }) {
  const p = c.predicted;
  if (!p) return <td className="muted">–</td>;
  const err = p.error === null ? '' : ` ${p.error >= 0 ? '+' : ''}${Math.round(p.error * 100)}%`;
  return (
    <td
      className={`mono predicted ${p.within === false ? 'bad' : ''}`}
      title={predictionLine(p)}
      data-bottleneck={`${p.bottleneck.stage}/${p.bottleneck.resource}`}
    >
      {p.roundMs.toFixed(1)} ms{err}
      {p.wrongStage && <span className="small"> ({p.wrongStage.stage})</span>}
    </td>
  );
}

function CaseTable({ cases }: { cases: SweepCase[] }) {
  return (
    <table className="explore-table" aria-label="Sweep cases">
      <thead>
        <tr>
          <th>topology</th>
          <th>mode</th>
          <th>data up / host / round</th>
          <th>theory</th>
          <th>ctrl in / round</th>
          <th>ctrl out / round</th>
          <th>median</th>
          <th>p90</th>
          <th>engine / rank peak</th>
          <th>rounds ok</th>
          <th title="the stage of the round's critical path with the largest median">longest stage, ms</th>
          <th title="the round model's prediction from this machine's calibration (docs/model.md), its error against the median, and its bottleneck">
            predicted
          </th>
          <th>trace</th>
        </tr>
      </thead>
      <tbody>
        {cases.map((c) => {
          const match =
            c.dataUp.measured.length > 0 && c.dataUp.measured.every((x, h) => x === c.dataUp.theory[h]);
          return (
            <tr
              key={c.index}
              className="explore-case"
              data-case={`${c.topology} ${c.mode}`}
              onClick={() => void openCaseTrace(c)}
              title={c.trace ? `open the trace of ${c.topology} ${c.mode}` : 'no trace recorded'}
            >
              <td className="mono">{c.topology}</td>
              <td>
                <span className="swatch" style={{ background: MODE_COLOURS[c.mode] }} />
                {c.mode}
                {c.labOnly && <span className="tag">lab-only</span>}
              </td>
              <td className="mono">{hostsText(c.dataUp.measured)}</td>
              <td className={`mono ${match ? 'ok' : 'bad'}`}>
                {hostsText(c.dataUp.theory)} {match ? '=' : '≠'}
              </td>
              <td className="mono">{formatBytes(c.controllerIngressPerRound)}</td>
              <td className="mono">{formatBytes(c.controllerEgressPerRound)}</td>
              <td className="mono">{c.roundMs.median.toFixed(1)} ms</td>
              <td className="mono">{c.roundMs.p90.toFixed(1)} ms</td>
              <td className="mono">
                {formatBytes(c.memory.enginePeakRssBytes)} /{' '}
                {c.memory.rankPeakRssBytes === null ? '–' : formatBytes(c.memory.rankPeakRssBytes)}
              </td>
              <td
                className={c.verdict === 'ok' ? 'ok' : 'bad'}
                title={`after ${c.warmupRounds ?? 0} warm-up rounds that no figure counts`}
              >
                {c.verdicts.ok}/{c.roundsRequested} {c.error ? `error: ${c.error}` : c.verdict}
                <span className="muted small"> +{c.warmupRounds ?? 0} warm-up</span>
              </td>
              <StageCell c={c} />
              <PredictedCell c={c} />
              <td>
                {c.trace ? (
                  <button type="button" className="link" aria-label={`Open trace ${c.topology} ${c.mode}`}>
                    open
                  </button>
                ) : (
                  '–'
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
