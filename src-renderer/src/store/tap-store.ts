// Taps and captures from the window: the "Tap a cluster" dialog (start and
// stop live taps on a cluster the lab did not start, switch the view to
// them) and "Open capture" (a pcap/pcapng imported with the salt given and
// opened as a trace). What is shown comes from the lab's `view` events; this
// store holds only the dialogs' state.
import { checkNumber, NUMBER_RANGES } from '@shared/lab/number-ranges';
import { create } from 'zustand';
import type { CaptureSummary, LabApi, TapInfo, TapSpec } from '@shared/lab/contract';
import { send, useLab } from './lab-store';
import { canUpload } from './trace-store';

export interface TapForm {
  listen: string;
  upstream: string;
  saltHex: string;
  name: string;
}

export interface TapState {
  dialog: 'taps' | 'capture' | null;
  taps: TapInfo[];
  form: TapForm;
  busy: string | null;
  error: string | null;
  /** The last capture imported, and the trace it was opened as: its notice belongs to that trace alone. */
  lastCapture: (CaptureSummary & { trace: string | null }) | null;
}

export const useTaps = create<TapState>(() => ({
  dialog: null,
  taps: [],
  form: { listen: '127.0.0.1:0', upstream: '', saltHex: '', name: '' },
  busy: null,
  error: null,
  lastCapture: null,
}));

export const isViewingTaps = (): boolean => useLab.getState().view.kind === 'tap';

export async function refreshTaps(): Promise<void> {
  const reply = await send({ type: 'listTaps' });
  if (reply.ok) useTaps.setState({ taps: reply.taps });
}

export async function openTapDialog(): Promise<void> {
  useTaps.setState({ dialog: 'taps', error: null });
  await refreshTaps();
}

export function openCaptureDialog(): void {
  useTaps.setState({ dialog: 'capture', error: null });
}

export function closeTapDialogs(): void {
  useTaps.setState({ dialog: null, error: null, busy: null });
}

/** The dialog's fields as a TapSpec, or a message naming what is wrong (the lab checks again). */
export function tapSpecOfForm(f: TapForm): TapSpec | string {
  const listen = /^(?:(.+):)?(\d{1,5})$/.exec(f.listen.trim());
  if (!listen) return 'Listen must be [ADDR:]PORT, e.g. 127.0.0.1:7001 (port 0: any free port)';
  const up = /^(.+):(\d{1,5})$/.exec(f.upstream.trim());
  if (!up) return 'Upstream must be HOST:PORT, e.g. 10.0.0.5:7000 (the controller the relay dialled)';
  if (!/^\s*[0-9a-fA-F]{32}\s*$/.test(f.saltHex))
    return "Salt must be the cluster's session salt: 32 hex digits";
  // Ports in the lab's one range (`relay-lab tap --listen` refuses the same).
  const listenPort = checkNumber(NUMBER_RANGES.port, listen[2], 'Listen port');
  if (!listenPort.ok) return listenPort.error;
  const upstreamPort = checkNumber(NUMBER_RANGES.port, up[2], 'Upstream port');
  if (!upstreamPort.ok) return upstreamPort.error;
  const spec: TapSpec = {
    listenHost: listen[1] ?? '127.0.0.1',
    listenPort: listenPort.value,
    upstreamHost: up[1]!,
    upstreamPort: upstreamPort.value,
    saltHex: f.saltHex.trim(),
  };
  if (f.name.trim()) spec.name = f.name.trim();
  return spec;
}

export async function startTap(): Promise<void> {
  const spec = tapSpecOfForm(useTaps.getState().form);
  if (typeof spec === 'string') return void useTaps.setState({ error: spec });
  useTaps.setState({ busy: 'Starting tap…', error: null });
  const reply = await send({ type: 'startTap', tap: spec });
  useTaps.setState(
    reply.ok
      ? // Keep the salt (the next tap of the same cluster needs it), clear the rest.
        { busy: null, taps: reply.taps, form: { ...useTaps.getState().form, upstream: '', name: '' } }
      : { busy: null, error: `${reply.error}: ${reply.message}` },
  );
}

export async function stopTap(id: number): Promise<void> {
  const reply = await send({ type: 'stopTap', id });
  useTaps.setState(reply.ok ? { taps: reply.taps } : { error: `${reply.error}: ${reply.message}` });
}

export async function showTaps(): Promise<void> {
  await send({ type: 'showTaps' });
}

export async function backToLab(): Promise<void> {
  await send({ type: 'closeTrace' });
}

/** Browser mode: upload the file (the traces folder's upload path and its caps), then import it. Electron: a file dialog. */
export async function openCapture(api: LabApi | null, file: File | null, saltHex: string): Promise<void> {
  if (!/^\s*[0-9a-fA-F]{32}\s*$/.test(saltHex))
    return void useTaps.setState({ error: "Salt must be the capture's session salt: 32 hex digits" });
  useTaps.setState({ error: null });
  let name: string | undefined;
  if (file && canUpload(api)) {
    useTaps.setState({ busy: `Uploading ${file.name}…` });
    try {
      name = await api.uploadTrace(file, file.name);
    } catch (e) {
      return void useTaps.setState({ busy: null, error: e instanceof Error ? e.message : String(e) });
    }
  }
  useTaps.setState({ busy: 'Importing capture…' });
  const reply = await send(
    name === undefined
      ? { type: 'openCapture', saltHex: saltHex.trim() }
      : { type: 'openCapture', name, saltHex: saltHex.trim() },
  );
  useTaps.setState(
    reply.ok
      ? {
          busy: null,
          dialog: null,
          lastCapture: { ...reply.capture, trace: reply.view.kind === 'trace' ? reply.view.name : null },
        }
      : { busy: null, error: `${reply.error}: ${reply.message}` },
  );
}
