// Run controls: start a topology (from the form in the topology panel),
// stop, pause and step rounds, speed; theme and help.
import { useLab, send } from '../store/lab-store';
import { AttachButton } from './AttachView';
import type { SessionSnapshot } from '@shared/lab/state';
import { useUi, togglePane } from '../store/ui-store';
import { startFromForm } from '../store/start-topology';
import { formatInt } from '../lib/format';
import { openScenarios } from '../store/scenario-store';
import { TraceButtons } from './TracesView';
import { useDismiss } from './popup-dismiss';
import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { useRepro } from '../store/repro-store';
import { useMediaQuery } from '../lib/use-media-query';
import { openExplore } from '../store/explore-store';
import { GlossaryButton } from './GlossaryDrawer';
import { TourButton } from './TourPanel';
import { TapButtons } from './TapCaptureDialog';
import { RecordButton } from './ReproFilesPanel';
import type { Finding } from '@shared/lab/records';
import { currentStall, lastCompletedRound } from '../lib/stalls';
import { liveRankCount, noRankLeft } from '../lib/rank-states';
import type { LabView } from '@shared/lab/contract';

const SPEEDS = [0, 50, 100, 250, 500, 1000, 2000];
/** Below this window width the secondary controls move into the "More" menu (no wrap, no sideways scroll); above it, as many as the line holds stay on it. */
export const TOOLBAR_INLINE_MIN_PX = 1360;
/** The level at which every secondary control is in "More" (a narrow window starts there). */
const ALL_IN_MORE = 3;

const PANE_BUTTONS = [
  { pane: 'topology', label: 'Topology pane' },
  { pane: 'inspector', label: 'Inspector pane' },
  { pane: 'bottom', label: 'Bottom panes' },
] as const;

/** A "More" button opening the controls that do not fit; Escape or a click outside closes it. */
function OverflowMenu({ children }: { children: React.ReactNode }) {
  const [open, setOpen] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  useDismiss(ref, open, () => setOpen(false));
  return (
    <div className="overflow-menu" ref={ref}>
      <button type="button" aria-haspopup="menu" aria-expanded={open} onClick={() => setOpen(!open)}>
        More ▾
      </button>
      {open && (
        <div className="overflow-items" role="menu" aria-label="More controls" onClick={() => setOpen(false)}>
          {children}
        </div>
      )}
    </div>
  );
}

/**
 * The status (run state, rounds done) shrinks before the controls overflow: it is cut when a part of
 * it no longer shows all of its text. At 1440x900 it shrank to 9 px, the line not overflowing, while
 * every control stayed inline: neither the run state nor the rounds count was on screen.
 */
function statusCut(toolbar: HTMLElement): boolean {
  const status = toolbar.querySelector('.status');
  if (!status) return false;
  return [...status.children].some(
    (c) => c.scrollWidth > c.clientWidth + 1 || c.getBoundingClientRect().width < 1,
  );
}

/** The window's inner width, followed on resize. */
function useWindowWidth(): number {
  const [w, setW] = useState(() => (typeof window === 'undefined' ? 0 : window.innerWidth));
  useEffect(() => {
    const on = () => setW(window.innerWidth);
    window.addEventListener('resize', on);
    return () => window.removeEventListener('resize', on);
  }, []);
  return w;
}

/**
 * The run state the toolbar names. A trace is a recording: at its time
 * point the topology had as many live ranks as it had then, so it reads
 * "trace: 8 of 8 ranks live", never "stopped" while ranks were running.
 */
export function runState(s: SessionSnapshot, viewingTrace: boolean, stall: Finding | null = null): string {
  if (viewingTrace) return 'trace';
  if (!s.running) return 'stopped';
  // "running" with every rank dead would be untrue: nothing runs, and nothing will.
  if (noRankLeft(s)) return 'ended';
  if (s.roundsPaused) return 'paused';
  // "running" while a round has been stuck past its threshold would be untrue.
  return stall ? 'stalled' : 'running';
}

export function runStateText(
  s: SessionSnapshot,
  viewingTrace: boolean,
  stall: Finding | null = null,
  view: LabView['kind'] = viewingTrace ? 'trace' : 'live',
): string {
  // Taps watch a cluster from outside: its ranks are known from their Hellos, not their states.
  if (view === 'tap') return `taps: ${s.ranks.length} rank${s.ranks.length === 1 ? '' : 's'} seen`;
  if (viewingTrace) {
    // A socket-level reproduction's trace: one connection, no cluster (hasTopology).
    if (s.ranks.length === 0) return 'trace: no topology, one connection';
    const live = liveRankCount(s);
    if (live === 0)
      return s.ranks.every((r) => r.state === 'exited')
        ? 'trace: every rank has exited'
        : 'trace: no rank live at this point';
    const rounds = s.roundsPaused ? ', rounds paused' : '';
    return `trace: ${live} of ${s.ranks.length} ranks live${rounds}`;
  }
  const st = runState(s, false, stall);
  if (st === 'stalled') {
    const ranks = stall!.ranks?.length
      ? `, waiting for rank${stall!.ranks.length > 1 ? 's' : ''} ${stall!.ranks.join(', ')}`
      : '';
    return `stalled: round ${s.round}${ranks}`;
  }
  if (st === 'ended') return 'rounds ended: no rank is alive';
  return st === 'paused' ? 'rounds paused' : st;
}

export function Toolbar() {
  const snapshot = useLab((s) => s.snapshot);
  const connection = useLab((s) => s.connection);
  const theme = useUi((s) => s.theme);
  // A saved trace or live taps: the run controls act on the lab's own topology, which is not shown.
  const viewingTrace = useLab((s) => s.view.kind !== 'live');
  const viewKind = useLab((s) => s.view.kind);
  const running = (snapshot?.running ?? false) && !viewingTrace;
  const paused = snapshot?.roundsPaused ?? false;
  const interval = snapshot?.config.roundIntervalMs ?? 250;
  const wide = useMediaQuery(`(min-width: ${TOOLBAR_INLINE_MIN_PX}px)`);
  const stall = useLab((s) => currentStall(s.findings, lastCompletedRound(s.rounds, s.snapshot)));

  // How much of the secondary controls moves into "More" (0: none, 1: the teaching pair, 2: and
  // Explore and Reproductions, 3: all): the least that keeps every control, and the whole status,
  // on the line. A state can widen the line (Record becomes
  // "● Recording (N)", a stall names its ranks): each such change measures again, before paint.
  const toolbarRef = useRef<HTMLElement>(null);
  const recording = useRepro((s) => (s.recording?.on ? `on ${s.recording.actions}` : 'off'));
  const winWidth = useWindowWidth();
  const [level, setLevel] = useState(wide ? 0 : ALL_IN_MORE);
  // The state's words can widen the line too (a stall names its ranks, every rank dead says so).
  const stateWords = snapshot ? runStateText(snapshot, viewingTrace, stall, viewKind) : '';
  useLayoutEffect(() => setLevel(wide ? 0 : ALL_IN_MORE), [wide, recording, winWidth, stateWords]);
  useLayoutEffect(() => {
    const el = toolbarRef.current;
    if (el && level < ALL_IN_MORE && (el.scrollWidth > el.clientWidth || statusCut(el))) setLevel(level + 1);
  });

  const panes = useUi((s) => s.panes);
  // Taps and captures (a different source), panes, theme and help are always in the "More" menu; traces, reproductions and teaching are
  // inline on a wide window and join them in "More" on a narrow one (nothing wraps or is clipped).
  const inMore = (
    <>
      <TapButtons />
      <AttachButton />
      {PANE_BUTTONS.map((p) => (
        <button
          key={p.pane}
          type="button"
          aria-pressed={panes[p.pane]}
          onClick={() => togglePane(p.pane)}
          title={`Show or hide the ${p.label.toLowerCase()} (or press Enter on its splitter)`}
        >
          {p.label}
        </button>
      ))}
      <button
        type="button"
        onClick={() => useUi.getState().set({ theme: theme === 'dark' ? 'light' : 'dark' })}
        title="Toggle theme (T)"
      >
        {theme === 'dark' ? 'Light theme' : 'Dark theme'}
      </button>
      <button
        type="button"
        onClick={() => useUi.getState().set({ helpOpen: true })}
        title="Keyboard shortcuts (?)"
      >
        Shortcuts
      </button>
    </>
  );
  // The teaching pair leaves the line first, then the rest of the secondary controls.
  const teaching = (
    <>
      <GlossaryButton />
      <TourButton />
    </>
  );
  // Traces and Record stay on the line longest (a recording shows there as "● Recording (N)").
  const sessionTools = (
    <>
      <TraceButtons />
      <RecordButton />
    </>
  );
  const labTools = (
    <>
      <button
        type="button"
        onClick={() => void openExplore()}
        title="Sweep topologies x modes, measured beside theory"
      >
        Explore
      </button>
      <button
        type="button"
        onClick={() => void openScenarios()}
        title="Reproductions of the transport's historical bugs"
      >
        Reproductions
      </button>
    </>
  );

  return (
    <header className="toolbar" role="toolbar" aria-label="Run controls" ref={toolbarRef}>
      <span className="brand">Relay Lab</span>
      {/* While a session runs, Start is not the obvious next step: it replaces the session (after asking). */}
      <button
        type="button"
        className={running ? undefined : 'primary'}
        onClick={() => void startFromForm()}
        title={
          running
            ? 'Start a new topology from the form, replacing the running session (asks first; Ctrl+Enter)'
            : 'Start a topology from the form (Ctrl+Enter)'
        }
        disabled={viewingTrace}
      >
        Start
      </button>
      <button type="button" onClick={() => void send({ type: 'stop' })} disabled={!running}>
        Stop
      </button>
      <button
        type="button"
        onClick={() => void send({ type: paused ? 'resumeRounds' : 'pauseRounds' })}
        disabled={!running}
        title="Pause or resume rounds (R)"
      >
        {paused ? 'Resume rounds' : 'Pause rounds'}
      </button>
      <button
        type="button"
        onClick={() => void send({ type: 'stepRound' })}
        disabled={!running || !paused}
        title="Run one round (.)"
      >
        Step round
      </button>
      <label className="speed">
        Interval
        <select
          aria-label="Round interval"
          value={SPEEDS.includes(interval) ? interval : ''}
          onChange={(e) => void send({ type: 'setSpeed', roundIntervalMs: Number(e.target.value) })}
          disabled={!running}
        >
          {!SPEEDS.includes(interval) && <option value="">{interval} ms</option>}
          {SPEEDS.map((ms) => (
            <option key={ms} value={ms}>
              {ms === 0 ? 'full speed' : `${ms} ms`}
            </option>
          ))}
        </select>
      </label>
      <div className="status" aria-live="polite">
        <span className={`dot ${connection}`} title={`connection ${connection}`} />
        {snapshot ? (
          <>
            <span
              data-run-state={runState(snapshot, viewingTrace, stall)}
              title={
                stall
                  ? `${runStateText(snapshot, viewingTrace, stall, viewKind)}: ${stall.message}`
                  : undefined
              }
            >
              {runStateText(snapshot, viewingTrace, stall, viewKind)}
            </span>
            <span className="mono" aria-label="Rounds completed">
              {formatInt(snapshot.roundsCompleted)} rounds done
            </span>
            {/* On a narrow window Record is inside "More": the state it is in stays on the line. */}
            {recording !== 'off' && level >= ALL_IN_MORE && (
              <span className="record-on" title="Recording: Record is in the More menu (stop it there)">
                ● recording
              </span>
            )}
          </>
        ) : (
          <span>{connection === 'open' ? 'waiting for the lab…' : connection}</span>
        )}
      </div>
      {level === 0 && teaching}
      {level < ALL_IN_MORE && sessionTools}
      {level <= 1 && labTools}
      <OverflowMenu>
        {level >= 1 && teaching}
        {level >= ALL_IN_MORE && sessionTools}
        {level >= 2 && labTools}
        {inMore}
      </OverflowMenu>
    </header>
  );
}
