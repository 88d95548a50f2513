// What the window is showing, as one key: the live session (by its start),
// the taps, or one saved trace. State that belongs to one source (an error
// from a command sent to it, a notice about it) is stale once the key
// changes; view settings (the filter, columns) are not and survive it.
import type { LabView } from '@shared/lab/contract';
import type { SessionSnapshot } from '@shared/lab/state';

export function sourceKey(view: LabView, snapshot: Pick<SessionSnapshot, 'startedAt'> | null): string {
  if (view.kind === 'trace') return `trace:${view.name}`;
  if (view.kind === 'tap') return 'tap';
  if (view.kind === 'attached') return `attached:${view.address}:${snapshot?.startedAt ?? 'none'}`;
  return `live:${snapshot?.startedAt ?? 'none'}`;
}

/**
 * Why a command on the lab's own topology (kill, pause, faults, rounds) cannot
 * be sent from what is on screen, or null when it can. A trace is a
 * recording and taps watch a cluster the lab did not start: the lab's
 * topology is not the one shown, so the command would act on something unseen.
 */
export function liveActionBlocker(view: LabView): string | null {
  if (view.kind === 'trace')
    return 'A saved trace is a recording: nothing in it can be killed or paused. Back to live to act on the running topology.';
  if (view.kind === 'tap')
    return 'Taps watch a cluster the lab did not start: the lab cannot kill or pause it. Back to live to act on the lab topology.';
  if (view.kind === 'attached' && view.state !== 'live')
    return view.state === 'lost'
      ? 'The connection to the job is down: what is shown is not live, and nothing can be sent to it until the lab reconnects.'
      : 'The job has ended: nothing is left to kill or pause.';
  return null;
}
