// "Attach to a cluster": the window watching a topology that runs elsewhere
// (a Slurm job's watch server, reached directly or through an SSH tunnel).
// What is shown comes from the lab's `view` events; this store holds only the
// dialog's state.
import { create } from 'zustand';
import { send } from './lab-store';

export interface AttachState {
  open: boolean;
  address: string;
  token: string;
  busy: boolean;
  error: string | null;
}

export const useAttach = create<AttachState>(() => ({
  open: false,
  address: '127.0.0.1:',
  token: '',
  busy: false,
  error: null,
}));

export function openAttachDialog(): void {
  useAttach.setState({ open: true, error: null });
}

export function closeAttachDialog(): void {
  useAttach.setState({ open: false, busy: false });
}

/** The same shape the lab checks (src-shared/lab/validate.ts), said before anything is sent. */
export function attachFormError(address: string, token: string): string | null {
  const m = /^([A-Za-z0-9.:[\]-]+):(\d{1,5})$/.exec(address.trim());
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535)
    return "Address is HOST:PORT with a port from 1 to 65535 (the job folder's watch.json says which)";
  if (!/^[A-Za-z0-9_-]{16,128}$/.test(token.trim())) return 'Token is the job\'s (watch.json\'s "token")';
  return null;
}

export async function attach(): Promise<void> {
  const { address, token } = useAttach.getState();
  const error = attachFormError(address, token);
  if (error) {
    useAttach.setState({ error });
    return;
  }
  useAttach.setState({ busy: true, error: null });
  const reply = await send({ type: 'attach', address: address.trim(), token: token.trim() });
  if (!reply.ok) useAttach.setState({ busy: false, error: `${reply.error}: ${reply.message}` });
  else useAttach.setState({ busy: false, open: false });
}

export async function detach(): Promise<void> {
  await send({ type: 'detach' });
}
