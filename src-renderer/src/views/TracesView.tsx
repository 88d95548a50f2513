// Traces in the window: Save trace / Export pcapng / Open trace in the
// toolbar, the dialog that lists the traces folder (and takes an upload
// where the transport can carry one), and, while a saved trace is open, the
// banner that says so with its timeline to scrub and the way back to live.
import { Modal } from './Modal';
import { useRef, useState } from 'react';
import type { LabView, TraceStep } from '@shared/lab/contract';
import { currentLab, useLab } from '../store/lab-store';
import {
  backToLive,
  canUpload,
  openTrace,
  openTraceDialog,
  saveTrace,
  seekTrace,
  stepTrace,
  uploadAndOpen,
  useTraces,
} from '../store/trace-store';
import { formatBytes } from '../lib/format';

export function TraceButtons() {
  // An attached job saves as the lab's own session does: its trace comes from the job (a link
  // that is down is answered in words, not by a greyed button).
  const attached = useLab((s) => s.view.kind === 'attached');
  const viewing = useLab((s) => s.view.kind !== 'live' && s.view.kind !== 'attached');
  const viewingTrace = useLab((s) => s.view.kind === 'trace');
  const running = useLab((s) => s.snapshot !== null);
  const busy = useTraces((s) => s.busy);
  return (
    <>
      <button
        type="button"
        onClick={() => void saveTrace('ndjson')}
        disabled={viewing || !running || busy !== null}
        title={
          attached
            ? "Save the attached job's trace so far (fetched from the job) as an NDJSON trace"
            : 'Save the running session (events and captured bytes) as an NDJSON trace'
        }
      >
        Save trace
      </button>
      <button
        type="button"
        onClick={() => void saveTrace('pcapng')}
        disabled={(viewing && !viewingTrace) || !running || busy !== null}
        title={
          viewingTrace
            ? "Export the opened trace's units as pcapng for Wireshark and tshark"
            : viewing
              ? "Taps are exported with 'relay-lab tap --pcapng FILE'; go back to the lab to export its session"
              : attached
                ? "Export the attached job's trace so far as pcapng for Wireshark and tshark"
                : 'Export the running session as pcapng for Wireshark and tshark'
        }
      >
        Export pcapng
      </button>
      <button
        type="button"
        onClick={() => void openTraceDialog()}
        title="Open a saved trace for offline inspection"
      >
        Open trace
      </button>
    </>
  );
}

/** The outcome of the last save, with a download link where the transport offers one. */
export function TraceNotice() {
  const { saved, busy, error } = useTraces();
  if (busy)
    return (
      <div className="notice-bar" role="status">
        {busy}
      </div>
    );
  if (error && !useTraces.getState().dialogOpen)
    return (
      <div className="error-bar" role="alert">
        {error}
        <button
          type="button"
          className="link"
          aria-label="Dismiss error"
          onClick={() => useTraces.setState({ error: null })}
        >
          ×
        </button>
      </div>
    );
  if (!saved) return null;
  return (
    <div className="notice-bar" role="status" aria-label="Saved trace">
      Saved <span className="mono">{saved.name}</span> ({formatBytes(saved.bytes)}, {saved.records} records)
      to <span className="mono">{saved.path}</span>
      {saved.download && (
        <a className="push-right" href={saved.download} download={saved.name}>
          Download
        </a>
      )}
      <button
        type="button"
        className="link"
        aria-label="Dismiss"
        onClick={() => useTraces.setState({ saved: null })}
      >
        ×
      </button>
    </div>
  );
}

export function TraceBanner() {
  const view = useLab((s) => s.view);
  if (view.kind !== 'trace') return null;
  return (
    <section className="trace-banner" aria-label="Trace">
      <div className="trace-banner-head">
        <strong role="status">Viewing trace {view.name} (offline)</strong>
        {!view.complete && <span className="tag">cut short: no end line</span>}
        <span className="mono small" aria-label="Trace time">
          {formatMs(view.t)} / {formatMs(view.duration)}
        </span>
        <TraceStepper />
        <button type="button" className="primary push-right" onClick={() => void backToLive()}>
          Back to live
        </button>
      </div>
      <Timeline view={view} />
    </section>
  );
}

/** The trace's stepping keys (timeline focused; [ and ] anywhere): in the buttons' tooltips and the help. */
export const TRACE_STEP_KEYS: { by: TraceStep; dir: 1 | -1; label: string; keys: string; what: string }[] = [
  { by: 'unit', dir: -1, label: '◀ unit', keys: '←', what: 'Previous unit' },
  { by: 'unit', dir: 1, label: 'unit ▶', keys: '→', what: 'Next unit' },
  { by: 'round', dir: -1, label: '◀ round', keys: 'Shift+← or PageUp', what: 'Previous round report' },
  { by: 'round', dir: 1, label: 'round ▶', keys: 'Shift+→ or PageDown', what: 'Next round report' },
  { by: 'finding', dir: -1, label: '◀ finding', keys: '[', what: 'Previous finding' },
  { by: 'finding', dir: 1, label: 'finding ▶', keys: ']', what: 'Next finding' },
];

function TraceStepper() {
  return (
    <span className="trace-stepper" role="group" aria-label="Step through the trace">
      {TRACE_STEP_KEYS.map((s) => (
        <button
          key={`${s.by}${s.dir}`}
          type="button"
          title={`${s.what} (${s.keys}; timeline focused)`}
          aria-keyshortcuts={s.keys.split(' or ')[0]}
          onClick={() => void stepTrace(s.by, s.dir)}
        >
          {s.label}
        </button>
      ))}
    </span>
  );
}

/** The step a key asks for on the focused timeline, or null (the key keeps its usual meaning). */
export function timelineKeyStep(key: string, shift: boolean): { by: TraceStep; dir: 1 | -1 } | null {
  if (key === 'ArrowRight') return { by: shift ? 'round' : 'unit', dir: 1 };
  if (key === 'ArrowLeft') return { by: shift ? 'round' : 'unit', dir: -1 };
  if (key === 'PageDown') return { by: 'round', dir: 1 };
  if (key === 'PageUp') return { by: 'round', dir: -1 };
  if (key === ']') return { by: 'finding', dir: 1 };
  if (key === '[') return { by: 'finding', dir: -1 };
  return null;
}

function Timeline({ view }: { view: Extract<LabView, { kind: 'trace' }> }) {
  const [dragging, setDragging] = useState<number | null>(null);
  const value = dragging ?? view.t;
  const span = Math.max(view.duration, 1e-3);
  const step = Math.max(span / 2000, 0.001);
  return (
    <div className="timeline">
      <div className="timeline-marks" aria-label="Lifecycle and fault marks">
        {view.marks.map((m, i) => (
          <button
            key={i}
            type="button"
            className={`timeline-mark mark-${m.action}`}
            style={{ left: `${(m.t / span) * 100}%` }}
            title={`${formatMs(m.t)} ${m.label}`}
            aria-label={`mark ${m.label} at ${formatMs(m.t)}`}
            onClick={() => void seekTrace(m.t)}
          />
        ))}
      </div>
      <input
        type="range"
        aria-label="Trace timeline"
        title="Drag to scrub. ← → one unit, Shift+← → (PageUp/PageDown) one round, [ ] one finding; Home/End the ends"
        min={0}
        max={span}
        step={step}
        value={value}
        onChange={(e) => {
          const t = Number(e.target.value);
          setDragging(t);
          void seekTrace(t);
        }}
        onKeyDown={(e) => {
          const step = timelineKeyStep(e.key, e.shiftKey);
          if (!step) return;
          // The range's own arrow step is a sliver of time (about 6 ms): step by what is in the trace instead.
          e.preventDefault();
          void stepTrace(step.by, step.dir);
        }}
        onPointerUp={() => setDragging(null)}
        onKeyUp={() => setDragging(null)}
        onBlur={() => setDragging(null)}
      />
    </div>
  );
}

export function OpenTraceDialog() {
  const { list, busy, error } = useTraces();
  const close = () => useTraces.setState({ dialogOpen: false, error: null });
  const api = currentLab();
  const fileInput = useRef<HTMLInputElement>(null);
  return (
    <Modal
      label="Open trace"
      className="help traces-dialog"
      onClose={close}
      closeOnEscape
      subtitle="the traces folder, newest first"
      error={error}
    >
      {busy && <p className="muted">{busy}</p>}
      <ul className="trace-list" aria-label="Saved traces">
        {list === null && <li className="muted">Loading…</li>}
        {list?.length === 0 && <li className="muted">No saved traces yet.</li>}
        {list?.map((t) => (
          <li key={t.name}>
            <button
              type="button"
              aria-label={`trace ${t.name}`}
              disabled={busy !== null}
              onClick={() => void openTrace(t.name)}
            >
              <span className="mono">{t.name}</span>
              <span className="muted small">
                {' '}
                {formatBytes(t.bytes)} · {new Date(t.modifiedAt).toLocaleString()}
              </span>
            </button>
          </li>
        ))}
      </ul>
      <footer className="trace-dialog-foot">
        {canUpload(api) ? (
          <label>
            Upload a trace file{' '}
            <input
              ref={fileInput}
              type="file"
              accept=".ndjson,application/x-ndjson"
              aria-label="Upload a trace file"
              onChange={(e) => {
                const f = e.target.files?.[0];
                if (f) void uploadAndOpen(api, f);
              }}
            />
          </label>
        ) : (
          <button type="button" onClick={() => void openTrace()}>
            Choose a file…
          </button>
        )}
      </footer>
    </Modal>
  );
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`;
}
