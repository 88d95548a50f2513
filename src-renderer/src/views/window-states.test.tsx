// Component tests of what the window says about its state: the toolbar in
// a trace, the form's refused values beside their fields, the connection
// notices and the trace's stepping keys.
import { describe, it, expect, beforeEach } from 'vitest';
import { renderToStaticMarkup } from 'react-dom/server';
import { Toolbar, runStateText } from './Toolbar';
import { NewTopologyForm } from './NewTopologyForm';
import { ConnectionNotice } from './ConnectionNotice';
import { timelineKeyStep, TRACE_STEP_KEYS } from './TracesView';
import { useLab } from '../store/lab-store';
import { useUi } from '../store/ui-store';
import { emptyLabData } from '../store/apply-batch';
import { snapshot } from '../test-fixtures';
import { StartChoiceDialog } from './StartChoiceDialog';
import { useStartChoice } from '../store/start-topology';

const labInitial = { ...useLab.getInitialState() };
const uiInitial = { ...useUi.getInitialState() };
const setLab = (patch: Partial<ReturnType<typeof useLab.getState>>) =>
  Object.assign(useLab.getInitialState(), patch);
const setUi = (patch: Partial<ReturnType<typeof useUi.getState>>) =>
  Object.assign(useUi.getInitialState(), patch);
const trace = {
  kind: 'trace' as const,
  name: 'a.trace.ndjson',
  duration: 9000,
  t: 4000,
  complete: true,
  marks: [],
};

describe('window states', () => {
  beforeEach(() => {
    Object.assign(useLab.getInitialState(), labInitial, emptyLabData());
    Object.assign(useUi.getInitialState(), uiInitial);
  });

  it('a trace point with live ranks never reads "stopped"', () => {
    const snap = snapshot({ running: false });
    snap.ranks[5] = { ...snap.ranks[5], state: 'dead' };
    setLab({ snapshot: snap, view: trace, connection: 'open' });
    const html = renderToStaticMarkup(<Toolbar />);
    expect(html).toContain('data-run-state="trace"');
    expect(html).toContain('trace: 7 of 8 ranks live');
    expect(html).not.toContain('>stopped<');
    // Live and stopped still read as before.
    expect(runStateText(snapshot({ running: false }), false)).toBe('stopped');
    expect(runStateText(snapshot({ running: true, roundsPaused: true }), false)).toBe('rounds paused');
    const gone = snapshot({ running: false });
    gone.ranks = gone.ranks.map((r) => ({ ...r, state: 'dead' as const }));
    expect(runStateText(gone, true)).toBe('trace: no rank live at this point');
    // The end of a reproduction's run: every rank said RankExit (the replay derives it from the units).
    const exited = snapshot({ running: false });
    exited.ranks = exited.ranks.map((r) => ({ ...r, state: 'exited' as const }));
    expect(runStateText(exited, true)).toBe('trace: every rank has exited');
    // A socket-level reproduction's trace has no ranks at all.
    const socket = snapshot({ running: false, hosts: [], ranks: [] });
    socket.config = { ...socket.config, ranksPerHost: [] };
    expect(runStateText(socket, true)).toBe('trace: no topology, one connection');
  });

  it('says what the ranks say: no "running" with every rank dead, no "stopped" at a trace point with live ranks, no ranks "live" from taps', async () => {
    const { TopologyView } = await import('./TopologyView');
    const { SavingsView } = await import('./SavingsView');
    const controller = (html: string) =>
      (/aria-label="controller"[\s\S]*?<div class="mono small">([^<]*?) · salt/.exec(html)?.[1] ?? '').trim();
    // A live session whose every rank is dead: the reduce has ended, nothing runs.
    const allDead = snapshot({ running: true, round: 363, roundsCompleted: 363 });
    allDead.ranks = allDead.ranks.map((r) => ({ ...r, state: 'dead' as const }));
    setLab({ snapshot: allDead, connection: 'open' });
    const bar = renderToStaticMarkup(<Toolbar />);
    expect(bar).toContain('data-run-state="ended"');
    expect(bar).toContain('rounds ended: no rank is alive');
    expect(controller(renderToStaticMarkup(<TopologyView />))).toBe(
      'reduce ended: no rank is alive · 363 rounds done',
    );
    // A trace's point with 7 live ranks: the controller is on its round (a trace snapshot never runs).
    const point = snapshot({ running: false, round: 449, roundsCompleted: 448 });
    point.ranks[1] = { ...point.ranks[1], state: 'dead' };
    setLab({ snapshot: point, view: trace });
    expect(controller(renderToStaticMarkup(<TopologyView />))).toBe('on round 449');
    const ended = snapshot({ running: false, roundsCompleted: 3 });
    ended.ranks = ended.ranks.map((r) => ({ ...r, state: 'exited' as const }));
    setLab({ snapshot: ended });
    expect(controller(renderToStaticMarkup(<TopologyView />))).toBe('stopped · 3 rounds done');
    // Taps: ranks known from their Hellos, not their states; no model, frame size or savings of the
    // lab's defaults passed off as the cluster's.
    const tapped = snapshot({ running: true, round: 4, roundsCompleted: 4 });
    setLab({ snapshot: tapped, view: { kind: 'tap' } as ReturnType<typeof useLab.getState>['view'] });
    expect(renderToStaticMarkup(<Toolbar />)).toContain('taps: 8 ranks seen');
    const topo = renderToStaticMarkup(<TopologyView />);
    expect(controller(topo)).toBe('4 rounds seen');
    expect(topo).toContain('taps: hosts and ranks from their Hellos');
    expect(topo).not.toContain('4.00 MiB');
    const tapSavings = renderToStaticMarkup(<SavingsView />);
    expect(tapSavings).not.toContain('F = ');
    expect(tapSavings).not.toContain('took part in none');
    expect(tapSavings).toContain('Taps: a cluster the lab did not start');
    // A socket-level reproduction's trace: one connection, nothing folded, no savings table.
    const socket = snapshot({ running: false, hosts: [], ranks: [] });
    socket.config = { ...socket.config, ranksPerHost: [] };
    setLab({ snapshot: socket, view: trace });
    const noTopo = renderToStaticMarkup(<SavingsView />);
    expect(noTopo).not.toContain('F = ');
    expect(noTopo).not.toContain('fold: the relay folds');
    expect(noTopo).toContain('No topology');
  });

  it("an imported capture's notice shows over its own trace, not over a trace opened after it", async () => {
    const { CaptureNotice } = await import('./TapCaptureDialog');
    const { useTaps } = await import('../store/tap-store');
    const capture = {
      name: 'run4k.pcapng',
      streams: 12,
      units: 180,
      undecodable: 0,
      gapBytes: 0,
      trace: 'run4k.pcapng.trace.ndjson',
    };
    // Server rendering reads a store's initial state.
    const tapsInitial = { ...useTaps.getInitialState() };
    Object.assign(useTaps.getInitialState(), { lastCapture: capture });
    setLab({ snapshot: snapshot({ running: false }), view: { ...trace, name: 'run4k.pcapng.trace.ndjson' } });
    expect(renderToStaticMarkup(<CaptureNotice />)).toContain('run4k.pcapng');
    setLab({ view: { ...trace, name: 'repro-mid-frame-desync-historical.trace.ndjson' } });
    expect(renderToStaticMarkup(<CaptureNotice />)).toBe('');
    Object.assign(useTaps.getInitialState(), tapsInitial);
  });

  it('Start is the primary action only when nothing runs; a pending Start asks Save / Replace / Cancel', () => {
    const startButton = (html: string) => /<button[^>]*>Start<\/button>/.exec(html)?.[0] ?? '';
    setLab({ snapshot: snapshot({ running: false }), connection: 'open' });
    expect(startButton(renderToStaticMarkup(<Toolbar />))).toContain('class="primary"');
    setLab({ snapshot: snapshot({ running: true }) });
    const running = startButton(renderToStaticMarkup(<Toolbar />));
    expect(running).not.toContain('primary');
    expect(running).toContain('replacing the running session (asks first');
    expect(renderToStaticMarkup(<StartChoiceDialog />)).toBe('');
    const initial = { ...useStartChoice.getInitialState() };
    Object.assign(useStartChoice.getInitialState(), { pending: { ranksPerHost: [2, 2], mode: 'fold' } });
    const html = renderToStaticMarkup(<StartChoiceDialog />);
    Object.assign(useStartChoice.getInitialState(), initial);
    expect(html).toContain('role="alertdialog"');
    expect(html).toContain('8 ranks');
    for (const b of ['Save trace first, then start', 'Replace without saving', 'Cancel'])
      expect(html).toContain(`>${b}</button>`);
  });

  it('a stalled round shows in the status, and its finding reads resolved once the round completes', async () => {
    const { FindingsView } = await import('./FindingsView');
    const f = {
      id: 1,
      t: 10,
      severity: 'warn' as const,
      kind: 'stalled' as const,
      message: 'round 9 barrier has waited 900 ms for rank(s) [3]',
      ranks: [3],
      round: 9,
    };
    setLab({ snapshot: snapshot({ running: true, round: 9 }), findings: [f], connection: 'open' });
    let bar = renderToStaticMarkup(<Toolbar />);
    expect(bar).toContain('data-run-state="stalled"');
    expect(bar).toContain('stalled: round 9, waiting for rank 3');
    expect(renderToStaticMarkup(<FindingsView />)).not.toContain('data-resolved');
    setLab({ snapshot: snapshot({ running: true, round: 10 }) });
    bar = renderToStaticMarkup(<Toolbar />);
    expect(bar).toContain('data-run-state="running"');
    const list = renderToStaticMarkup(<FindingsView />);
    expect(list).toContain('data-resolved="true"');
    expect(list).toContain('>resolved</span>');
    expect(list).toContain('round 9 barrier has waited');
  });

  it('shows a refused value beside its field, as typed, tied to it for assistive technology', () => {
    setUi({
      formDrafts: { hosts: '40', modelMiB: '0.' },
      formErrors: { hosts: 'Hosts: 40 is outside 1 to 16' },
    });
    const html = renderToStaticMarkup(<NewTopologyForm />);
    const hosts = /<input[^>]*data-field="hosts"[^>]*>/.exec(html)?.[0] ?? '';
    expect(hosts).toContain('value="40"');
    expect(hosts).toContain('aria-invalid="true"');
    expect(hosts).toContain('aria-describedby="form-error-hosts"');
    expect(html).toContain(
      '<span id="form-error-hosts" class="field-error" role="alert">Hosts: 40 is outside 1 to 16</span>',
    );
    // A draft being typed shows as typed ("0." is not turned into 1).
    const model = /<input[^>]*data-field="modelMiB"[^>]*>/.exec(html)?.[0] ?? '';
    expect(model).toContain('value="0."');
    expect(model).not.toContain('aria-invalid');
  });

  it('tells a restarted lab from a stopped one and says how to reconnect', () => {
    const restarted = renderToStaticMarkup(<ConnectionNotice state="restarted" />);
    expect(restarted).toContain('The lab was restarted');
    expect(restarted).toContain('will not reconnect');
    expect(renderToStaticMarkup(<ConnectionNotice state="stopped" />)).toContain('npm start');
    expect(renderToStaticMarkup(<ConnectionNotice state="open" />)).toBe('');
  });

  it('steps a trace by unit, round and finding from the keys its tooltips name', () => {
    expect(timelineKeyStep('ArrowRight', false)).toEqual({ by: 'unit', dir: 1 });
    expect(timelineKeyStep('ArrowLeft', true)).toEqual({ by: 'round', dir: -1 });
    expect(timelineKeyStep('PageDown', false)).toEqual({ by: 'round', dir: 1 });
    expect(timelineKeyStep(']', false)).toEqual({ by: 'finding', dir: 1 });
    expect(timelineKeyStep('Home', false)).toBeNull();
    // Every step has a button whose tooltip names its key.
    expect(TRACE_STEP_KEYS.map((k) => `${k.by}${k.dir}`).sort()).toEqual(
      ['finding-1', 'finding1', 'round-1', 'round1', 'unit-1', 'unit1'].sort(),
    );
  });
});

describe('commit-time number fields elsewhere', () => {
  it('checks a whole number only on commit, with a reason', async () => {
    const { checkWhole } = await import('./CommitNumberInput');
    expect(checkWhole('50', 0, 600_000, 'latency ms')).toBe(50);
    expect(checkWhole('5.5', 0, 600_000, 'latency ms')).toBe('latency ms: a whole number from 0 to 600000');
    expect(checkWhole('700000', 0, 600_000, 'latency ms')).toBe('latency ms: 700000 is outside 0 to 600000');
    expect(checkWhole('', 1, 10, 'slice bytes')).toBe('slice bytes: a whole number from 1 to 10');
  });
});
