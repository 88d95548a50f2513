// The window attached to a topology that runs elsewhere (a Slurm job): the
// banner that says whether what is shown is live, and the dialog that asks
// for the job's address and token.
import { useLab } from '../store/lab-store';
import { attach, closeAttachDialog, detach, openAttachDialog, useAttach } from '../store/attach-store';
import { Modal } from './Modal';

export function AttachButton() {
  return (
    <button
      type="button"
      onClick={openAttachDialog}
      title="Watch a topology that runs elsewhere (a relay-lab slurm job) live, and act on its ranks"
    >
      Attach to a cluster
    </button>
  );
}

export function AttachLayer() {
  const open = useAttach((s) => s.open);
  return (
    <>
      <AttachBanner />
      {open && <AttachDialog />}
    </>
  );
}

function clock(ms: number): string {
  return new Date(ms).toLocaleTimeString();
}

function AttachBanner() {
  const view = useLab((s) => s.view);
  if (view.kind !== 'attached') return null;
  const status =
    view.state === 'live'
      ? `Attached to the job at ${view.address} · live`
      : view.state === 'lost'
        ? `Connection to ${view.address} lost at ${clock(view.since)}: what is shown stopped then and is not live; reconnecting`
        : `The job at ${view.address} has ended (at ${clock(view.since)}): what is shown is its last picture`;
  return (
    <section
      className={`trace-banner${view.state === 'live' ? '' : ' banner-warn'}`}
      aria-label="Attached job"
    >
      <div className="trace-banner-head">
        <strong role="status">{status}</strong>
        <span className="muted small">the lab&apos;s own topology keeps running</span>
        <button type="button" className="primary push-right" onClick={() => void detach()}>
          Back to the lab
        </button>
      </div>
    </section>
  );
}

function AttachDialog() {
  const { address, token, busy, error } = useAttach();
  return (
    <Modal
      label="Attach to a cluster"
      className="help traces-dialog"
      onClose={closeAttachDialog}
      closeOnEscape
      subtitle="a relay-lab slurm job's watch server: its folder's watch.json has the address and token (across machines, an SSH tunnel to it)"
      error={error}
    >
      <form
        className="tap-form"
        aria-label="Attach"
        onSubmit={(e) => {
          e.preventDefault();
          void attach();
        }}
      >
        <label className="tap-field">
          Address
          <input
            type="text"
            aria-label="Address"
            className="mono"
            spellCheck={false}
            placeholder="127.0.0.1:7450"
            value={address}
            onChange={(e) => useAttach.setState({ address: e.target.value })}
          />
        </label>
        <label className="tap-field">
          Token
          <input
            type="password"
            aria-label="Token"
            className="mono"
            spellCheck={false}
            value={token}
            onChange={(e) => useAttach.setState({ token: e.target.value })}
          />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Attaching…' : 'Attach'}
        </button>
      </form>
    </Modal>
  );
}
