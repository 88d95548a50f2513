// Taps and captures in the window (issue 14): the toolbar's "Tap a cluster"
// and "Open capture" buttons, the two dialogs, and, while the view shows
// taps, the banner that says so with the way back to the lab's own topology
// (which keeps running meanwhile).
import { Modal } from './Modal';
import { useEffect, useRef, useState } from 'react';
import { currentLab, useLab } from '../store/lab-store';
import { canUpload } from '../store/trace-store';
import {
  backToLab,
  closeTapDialogs,
  openCapture,
  openCaptureDialog,
  openTapDialog,
  refreshTaps,
  showTaps,
  startTap,
  stopTap,
  useTaps,
  type TapForm,
} from '../store/tap-store';
import { formatBytes, formatInt } from '../lib/format';

export function TapButtons() {
  return (
    <>
      <button
        type="button"
        onClick={() => void openTapDialog()}
        title="Put live taps on a real flodl cluster's connections and watch its units"
      >
        Tap a cluster
      </button>
      <button
        type="button"
        onClick={openCaptureDialog}
        title="Open a tcpdump/Wireshark capture (pcap, pcapng) of a flodl cluster as a trace"
      >
        Open capture
      </button>
    </>
  );
}

/** The banner while taps are shown, the last import's outcome, and whichever dialog is open. */
export function TapLayer() {
  const dialog = useTaps((s) => s.dialog);
  return (
    <>
      <TapBanner />
      <CaptureNotice />
      {dialog === 'taps' && <TapDialog />}
      {dialog === 'capture' && <CaptureDialog />}
    </>
  );
}

function TapBanner() {
  const view = useLab((s) => s.view);
  const links = useLab((s) => s.snapshot?.links.length ?? 0);
  if (view.kind !== 'tap') return null;
  return (
    <section className="trace-banner" aria-label="Taps">
      <div className="trace-banner-head">
        <strong role="status">
          Viewing {view.taps} tap{view.taps === 1 ? '' : 's'} on a cluster the lab did not start
        </strong>
        <span className="muted small">
          {links} link{links === 1 ? '' : 's'} seen · the lab&apos;s own topology keeps running
        </span>
        <button type="button" className="push-right" onClick={() => void openTapDialog()}>
          Manage taps
        </button>
        <button type="button" className="primary" onClick={() => void backToLab()}>
          Back to the lab
        </button>
      </div>
    </section>
  );
}

export function CaptureNotice() {
  const c = useTaps((s) => s.lastCapture);
  // Only over the trace the capture was opened as: over another trace it told of a file not shown.
  const shown = useLab((s) => (s.view.kind === 'trace' ? s.view.name : null));
  if (!c || shown === null || shown !== c.trace) return null;
  return (
    <div className="notice-bar" role="status" aria-label="Imported capture">
      Imported <span className="mono">{c.name}</span>: {c.streams} flodl stream{c.streams === 1 ? '' : 's'},{' '}
      {formatInt(c.units)} units, {c.undecodable} undecodable, {formatBytes(c.gapBytes)} missing (named as
      gaps)
      <button
        type="button"
        className="link"
        aria-label="Dismiss"
        onClick={() => useTaps.setState({ lastCapture: null })}
      >
        ×
      </button>
    </div>
  );
}

function Field({ label, field, placeholder }: { label: string; field: keyof TapForm; placeholder: string }) {
  const value = useTaps((s) => s.form[field]);
  return (
    <label className="tap-field">
      {label}
      <input
        type="text"
        aria-label={label}
        spellCheck={false}
        className="mono"
        placeholder={placeholder}
        value={value}
        onChange={(e) => useTaps.setState({ form: { ...useTaps.getState().form, [field]: e.target.value } })}
      />
    </label>
  );
}

function TapDialog() {
  const { taps, busy, error } = useTaps();
  const viewingTaps = useLab((s) => s.view.kind === 'tap');
  // Counters move while the dialog is open.
  useEffect(() => {
    const id = setInterval(() => void refreshTaps(), 1000);
    return () => clearInterval(id);
  }, []);
  return (
    <Modal
      label="Tap a cluster"
      className="help traces-dialog tap-dialog"
      onClose={closeTapDialogs}
      closeOnEscape
      subtitle="point a relay (or rank) at Listen instead of its upstream; every byte is forwarded unchanged"
      error={error}
    >
      <form
        className="tap-form"
        aria-label="New tap"
        onSubmit={(e) => {
          e.preventDefault();
          void startTap();
        }}
      >
        <Field label="Listen" field="listen" placeholder="[ADDR:]PORT, e.g. 127.0.0.1:7001" />
        <Field label="Upstream" field="upstream" placeholder="HOST:PORT of the controller (or relay)" />
        <Field label="Salt" field="saltHex" placeholder="the cluster's session salt, 32 hex digits" />
        <Field label="Name" field="name" placeholder="optional link prefix, e.g. h0.uplink" />
        <button type="submit" className="primary" disabled={busy !== null}>
          Add tap
        </button>
      </form>
      {busy && <p className="muted">{busy}</p>}
      <table className="tap-table" aria-label="Taps">
        <thead>
          <tr>
            <th>#</th>
            <th>name</th>
            <th>listen</th>
            <th>upstream</th>
            <th>state</th>
            <th>conns</th>
            <th>units</th>
            <th>undecodable</th>
            <th>gaps</th>
            <th>bytes</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {taps.length === 0 && (
            <tr>
              <td colSpan={11} className="muted">
                No taps yet.
              </td>
            </tr>
          )}
          {taps.map((t) => (
            <tr key={t.id} aria-label={`tap ${t.id}`}>
              <td>{t.id}</td>
              <td className="mono">{t.name ?? '(from Hello)'}</td>
              <td className="mono">
                {t.listenHost}:{t.boundPort}
              </td>
              <td className="mono">
                {t.upstreamHost}:{t.upstreamPort}
              </td>
              <td>{t.state}</td>
              <td>{t.connections}</td>
              <td>{formatInt(t.units)}</td>
              <td className={t.undecodable ? 'bad' : undefined}>{t.undecodable}</td>
              <td>{t.gaps}</td>
              <td>{formatBytes(t.bytes)}</td>
              <td>
                <button
                  type="button"
                  disabled={t.state !== 'listening'}
                  title="Close the listener; open connections are forwarded until they end"
                  onClick={() => void stopTap(t.id)}
                >
                  Stop
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <footer className="trace-dialog-foot">
        {viewingTaps ? (
          <button type="button" onClick={() => void backToLab()}>
            Back to the lab
          </button>
        ) : (
          <button type="button" disabled={taps.length === 0} onClick={() => void showTaps()}>
            Show taps
          </button>
        )}
      </footer>
    </Modal>
  );
}

function CaptureDialog() {
  const { busy, error } = useTaps();
  const salt = useTaps((s) => s.form.saltHex);
  const [file, setFile] = useState<File | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const api = currentLab();
  const upload = canUpload(api);
  return (
    <Modal
      label="Open capture"
      className="help traces-dialog"
      onClose={closeTapDialogs}
      closeOnEscape
      subtitle="a pcap or pcapng of a flodl cluster (tcpdump, Wireshark); units the capture missed are named as gaps"
      error={error}
    >
      <form
        className="tap-form"
        aria-label="Capture"
        onSubmit={(e) => {
          e.preventDefault();
          void openCapture(api, file, salt);
        }}
      >
        <Field label="Salt" field="saltHex" placeholder="the cluster's session salt, 32 hex digits" />
        {upload && (
          <label className="tap-field">
            Capture file
            <input
              ref={fileInput}
              type="file"
              aria-label="Capture file"
              accept=".pcap,.pcapng,.cap,application/vnd.tcpdump.pcap"
              onChange={(e) => setFile(e.target.files?.[0] ?? null)}
            />
          </label>
        )}
        <button type="submit" className="primary" disabled={busy !== null || (upload && !file)}>
          {upload ? 'Open' : 'Choose a file…'}
        </button>
      </form>
      {busy && <p className="muted">{busy}</p>}
    </Modal>
  );
}
