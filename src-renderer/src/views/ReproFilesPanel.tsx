// Reproductions as files, in the Reproductions dialog: Record the live
// session's actions, Save reproduction (the file drafted from what happened,
// editable before it is written), Open reproduction (load a file and replay
// it with the same picture as the built-ins). And the toolbar's Record button.
import { useEffect, useRef } from 'react';
import {
  draftReproduction,
  openReproductionFile,
  refreshRecording,
  runReproduction,
  saveReproduction,
  setRecording,
  useRepro,
} from '../store/repro-store';
import { useLab } from '../store/lab-store';
import { RunPictureView } from './RunPictureView';
import type { ReproRunView } from '@shared/repro/picture';
import './repro.css';

/** Toolbar: Record / Stop recording (the live session's actions, in order, stamped where the rounds were). */
export function RecordButton() {
  const recording = useRepro((s) => s.recording);
  const running = useLab((s) => (s.snapshot?.running ?? false) && s.view.kind === 'live');
  const on = recording?.on ?? false;
  // While recording, the count of captured actions follows the session (the host holds it).
  useEffect(() => {
    if (!on) return;
    const timer = setInterval(() => void refreshRecording(), 1000);
    return () => clearInterval(timer);
  }, [on]);
  return (
    <button
      type="button"
      className={on ? 'record-on' : undefined}
      aria-pressed={on}
      disabled={!running && !on}
      onClick={() => void (on ? setRecording(false).then(draftReproduction) : setRecording(true))}
      title={
        on
          ? 'Stop recording and save the reproduction (the file opens for editing)'
          : "Record the live session's kills, pauses, resumes and link faults as a reproduction"
      }
    >
      {on ? `● Recording (${recording?.actions ?? 0})` : 'Record'}
    </button>
  );
}

export function ReproFilesPanel() {
  const { recording, draft, saved, run, busy, error } = useRepro();
  const running = useLab((s) => (s.snapshot?.running ?? false) && s.view.kind === 'live');
  const text = useRef<HTMLTextAreaElement>(null);
  const current = () => text.current?.value ?? draft ?? '';
  return (
    <section className="repro-files" aria-label="Reproduction files">
      <h3>Your reproductions</h3>
      <p className="small">
        Record what you do in the live session (kill, pause or resume a rank, kill a host, apply or clear a
        link fault), in order, each action stamped with its round and what it came after (a deposit, a death,
        the seconds you waited). The file replays from round 0 on real processes (the rounds before Record
        made the state it started from), with the recorded merge order, and is judged against what happened.
      </p>
      <div className="row">
        <button
          type="button"
          aria-pressed={recording?.on ?? false}
          disabled={!running && !recording?.on}
          onClick={() => void setRecording(!(recording?.on ?? false))}
        >
          {recording?.on ? 'Stop recording' : 'Record'}
        </button>
        <button type="button" disabled={busy !== null} onClick={() => void draftReproduction()}>
          Save reproduction…
        </button>
        <label className="small">
          Open reproduction{' '}
          <input
            type="file"
            accept=".json,application/json"
            aria-label="Open reproduction"
            disabled={busy !== null}
            onChange={(e) => {
              const f = e.target.files?.[0];
              if (f) void openReproductionFile(f);
              e.target.value = '';
            }}
          />
        </label>
        {recording && (
          <span className="muted small" aria-label="Recording state">
            {recording.on ? 'recording' : 'not recording'} · {recording.actions} action(s) ·{' '}
            {recording.rounds} round(s) · from round {recording.fromRound}
          </span>
        )}
      </div>
      {error && (
        <p className="bad" role="alert">
          {error}
        </p>
      )}
      {draft !== null && (
        <>
          <label className="small" htmlFor="repro-draft">
            The file (edit the expectations freely; it is checked before it is saved or replayed)
          </label>
          <textarea id="repro-draft" ref={text} defaultValue={draft} key={draft} spellCheck={false} />
          <div className="row">
            <button type="button" disabled={busy !== null} onClick={() => void saveReproduction(current())}>
              Save file
            </button>
            <button
              type="button"
              className="primary"
              disabled={busy !== null}
              onClick={() => void runReproduction(current())}
            >
              {busy === 'running' ? 'Replaying…' : 'Replay now'}
            </button>
            {saved && (
              <span className="small" aria-label="Saved reproduction">
                saved <span className="mono">{saved.path}</span>
                {saved.download && (
                  <>
                    {' '}
                    <a href={saved.download} download={saved.name}>
                      download
                    </a>
                  </>
                )}
              </span>
            )}
          </div>
        </>
      )}
      {busy === 'running' && (
        <p className="muted small">Replaying on real processes beside the paused live session…</p>
      )}
      {run && <ReproRunResult run={run} />}
    </section>
  );
}

function ReproRunResult({ run }: { run: ReproRunView }) {
  const failed = run.results.filter((r) => !r.ok);
  return (
    <section className="scenario-result" aria-label="Replay result" data-held={run.held}>
      <p>
        <strong className={run.held ? 'ok' : 'bad'}>
          {run.held ? `All ${run.results.length} expectations hold` : `${failed.length} expectation(s) fail`}
        </strong>{' '}
        <span className="muted small">
          {/* Its duration is the picture's (the trace's span), shown once below. */}
          {run.name} · run verdict {run.verdict} · dead [{run.dead.join(', ')}]
        </span>
      </p>
      <RunPictureView picture={run.picture} label="replay" />
      <table className="measures" aria-label="Expectations">
        <thead>
          <tr>
            <th>expectation</th>
            <th>expected</th>
            <th>replay</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {run.results.map((r) => (
            <tr key={r.name} className={r.ok ? '' : 'differs'}>
              <td className="mono">{r.name}</td>
              <td className="mono">{r.expected}</td>
              <td className="mono">{r.actual}</td>
              <td className={r.ok ? 'ok' : 'bad'}>{r.ok ? 'holds' : 'FAILS'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
