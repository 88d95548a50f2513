// The Explore view's state: the sweep form, the running sweep's progress (the
// lab's `sweep` events), the result on screen and the saved sweeps. The live
// session is never wiped silently: before a sweep it is either saved (trace)
// and stopped, or kept running on purpose.
import { create } from 'zustand';
import type { LabBatch, ReplyOf, TraceFileInfo } from '@shared/lab/contract';
import type { SweepCommand } from '@shared/sweep/contract';
import type { UplinkMode, WireDtype } from '@shared/lab/topology';
import {
  DEFAULT_WARMUP,
  parseModes,
  parseTopologies,
  parseWarmup,
  SweepSpecError,
  validateSweepSpec,
} from '@shared/sweep/spec';
import { checkNumber, NUMBER_RANGES, type NumberRange } from '@shared/lab/number-ranges';
import type { SweepCase, SweepProgress, SweepResult, SweepSpec } from '@shared/sweep/types';
import { currentLab, send, useLab } from './lab-store';

export interface ExploreForm {
  topologies: string;
  modes: Record<UplinkMode, boolean>;
  modelBytes: string;
  dtype: WireDtype;
  rounds: string;
  /** Rounds run first in each case and left out of its figures. */
  warmupRounds: string;
  /** MB/s (10^6 bytes per second) per host uplink, each direction; empty: unshaped. */
  bandwidthMBps: string;
  latencyMs: string;
}

/** Explore's "Beyond this machine" form (BeyondView.tsx), as typed. */
export interface BeyondForm {
  hosts: string;
  ranksPerHost: string;
  modelBytes: string;
  dtype: WireDtype;
  modes: Record<UplinkMode, boolean>;
  hostBandwidth: string;
  hostLatency: string;
  controllerBandwidth: string;
  controllerLatency: string;
  controllerCores: string;
}

export const DEFAULT_BEYOND_FORM: BeyondForm = {
  hosts: '512',
  ranksPerHost: '8',
  modelBytes: '1GiB',
  dtype: 'f32',
  modes: { fold: true, forward: false, direct: true },
  hostBandwidth: '12.5GB/s',
  hostLatency: '0ms',
  controllerBandwidth: '12.5GB/s',
  controllerLatency: '0ms',
  controllerCores: '128',
};

export interface ExploreState {
  open: boolean;
  /** The sweep of this machine, or the model beyond it. */
  tab: 'sweep' | 'beyond';
  beyond: BeyondForm;
  form: ExploreForm;
  /** What happens to a running live topology when a sweep starts. */
  live: 'save-and-stop' | 'keep';
  /** From the click on Run until the sweep's reply: Run is disabled the whole time. */
  running: boolean;
  /** The live session is being saved before the sweep (a long session takes many seconds). */
  savingLive: boolean;
  progress: SweepProgress | null;
  /** Cases as they finish (the running sweep), then the whole result. */
  partial: SweepCase[];
  result: SweepResult | null;
  /** The result's JSON in the traces folder. */
  savedAs: string | null;
  saved: TraceFileInfo[];
  notice: string | null;
  /**
   * What the sweep did to the live session ("saved as … and stopped"), and which session
   * (its startedAt): once another live session starts the notice is about the past and goes.
   */
  liveNotice: { text: string; startedAt: number } | null;
  error: string | null;
}

export const DEFAULT_EXPLORE_FORM: ExploreForm = {
  topologies: '1x4,2x2,4x1',
  modes: { fold: true, forward: false, direct: true },
  modelBytes: '256KiB',
  dtype: 'f32',
  rounds: '3',
  warmupRounds: String(DEFAULT_WARMUP),
  bandwidthMBps: '50',
  latencyMs: '',
};

export const useExplore = create<ExploreState>(() => ({
  open: false,
  tab: 'sweep',
  beyond: DEFAULT_BEYOND_FORM,
  form: DEFAULT_EXPLORE_FORM,
  live: 'save-and-stop',
  running: false,
  savingLive: false,
  progress: null,
  partial: [],
  result: null,
  savedAs: null,
  saved: [],
  notice: null,
  liveNotice: null,
  error: null,
}));

// A notice about the live session is dropped as soon as a different live session runs.
useLab.subscribe((lab) => {
  const n = useExplore.getState().liveNotice;
  if (n && staleLiveNotice(n, lab)) useExplore.setState({ liveNotice: null });
});

/** True when the live session on screen is a running one other than the notice's. */
export function staleLiveNotice(
  n: { startedAt: number },
  lab: Pick<ReturnType<typeof useLab.getState>, 'view' | 'snapshot'>,
): boolean {
  return lab.view.kind === 'live' && !!lab.snapshot?.running && lab.snapshot.startedAt !== n.startedAt;
}

let subscribed = false;

/** Sweep commands go straight to the lab: their errors show in the Explore view, not the main error bar. */
async function sweepSend<C extends SweepCommand>(cmd: C): Promise<ReplyOf<C['type']>> {
  const api = currentLab();
  if (!api) return { ok: false, error: 'NOT_CONNECTED', message: 'not connected to the lab' };
  return api.command(cmd);
}

/** Sweep progress events of a lab batch into the store (the lab store ignores them). */
export function applySweepBatch(b: LabBatch): void {
  for (const e of b.events) {
    if (e.type !== 'sweep') continue;
    const p = e.progress;
    useExplore.setState((s) => ({
      progress: p,
      partial: p.finished
        ? [...s.partial.filter((c) => c.index !== p.finished!.index), p.finished]
        : s.partial,
      ...(p.state === 'error' ? { error: p.message ?? 'the sweep failed' } : {}),
    }));
  }
}

export async function openExplore(): Promise<void> {
  useExplore.setState({ open: true });
  const api = currentLab();
  if (api && !subscribed) {
    subscribed = true;
    api.subscribe(applySweepBatch);
  }
  await refreshSavedSweeps();
}

/** How long the saved-sweep list waits for the lab's connection (a page just loaded may not have it yet). */
const LIST_CONNECT_WAIT_MS = 60_000;
const LIST_RETRY_MS = 250;

export async function refreshSavedSweeps(): Promise<void> {
  // Explore opened right after the page loaded can ask before the connection is up: asked once,
  // the list stayed "no saved sweeps" though the folder held some. It asks again until connected.
  const until = Date.now() + LIST_CONNECT_WAIT_MS;
  for (;;) {
    const reply = await sweepSend({ type: 'listSweeps' });
    if (reply.ok) {
      useExplore.setState({ saved: reply.sweeps ?? [] });
      return;
    }
    if (reply.error !== 'NOT_CONNECTED' || !useExplore.getState().open || Date.now() >= until) return;
    await new Promise((r) => setTimeout(r, LIST_RETRY_MS));
  }
}

/** A typed number within the lab's range for it (`relay-lab sweep`'s flag refuses the same), or a named error. */
function ranged(text: string, range: NumberRange, label: string): number {
  const r = checkNumber(range, text, label);
  if (!r.ok) throw new SweepSpecError(r.error);
  return r.value;
}

const MB = 1e6;

/** Uplink bandwidth is typed in MB/s (decimal), its range is in bytes per second. */
function bandwidthOf(text: string): number {
  const r = NUMBER_RANGES.sweepBandwidth;
  const t = text.trim();
  const n = Math.round(Number(t) * MB);
  if (!/^\d*\.?\d+$/.test(t) || !Number.isSafeInteger(n) || n < r.min || n > r.max)
    throw new SweepSpecError(
      `Uplink bandwidth: a number of MB/s from ${r.min / MB} to ${Math.floor(r.max / MB)}`,
    );
  return n;
}

/** The form as a spec, or a named error. */
export function formToSpec(f: ExploreForm): SweepSpec {
  const modes = parseModes((Object.keys(f.modes) as UplinkMode[]).filter((m) => f.modes[m]).join(','));
  const spec: SweepSpec = {
    topologies: parseTopologies(f.topologies),
    modes,
    modelBytes: ranged(f.modelBytes, NUMBER_RANGES.modelBytes, 'Model size'),
    dtype: f.dtype,
    rounds: ranged(f.rounds, NUMBER_RANGES.sweepRounds, 'Rounds'),
    warmupRounds: parseWarmup(f.warmupRounds),
  };
  if (f.bandwidthMBps.trim() !== '') spec.uplinkBandwidth = bandwidthOf(f.bandwidthMBps);
  if (f.latencyMs.trim() !== '')
    spec.uplinkLatencyMs = ranged(f.latencyMs, NUMBER_RANGES.sweepLatencyMs, 'Uplink latency ms');
  return validateSweepSpec(spec);
}

export async function startSweep(): Promise<void> {
  const s = useExplore.getState();
  if (s.running) return;
  let spec: SweepSpec;
  try {
    spec = formToSpec(s.form);
  } catch (e) {
    useExplore.setState({ error: (e as Error).message });
    return;
  }
  const lab = useLab.getState();
  const liveRunning = lab.view.kind === 'live' && (lab.snapshot?.running ?? false);
  const saveFirst = liveRunning && s.live === 'save-and-stop';
  // Running from the click on: a second click does nothing, and the save shows at once.
  useExplore.setState({ error: null, notice: null, liveNotice: null, running: true, savingLive: saveFirst });
  if (saveFirst) {
    const startedAt = lab.snapshot!.startedAt;
    // The live topology's trace is saved before it stops: nothing is lost.
    const saved = await send({ type: 'saveTrace', format: 'ndjson' });
    if (!saved.ok) {
      useExplore.setState({
        running: false,
        savingLive: false,
        error: `could not save the live session first: ${saved.message}`,
      });
      return;
    }
    await send({ type: 'stop' });
    useExplore.setState({
      liveNotice: { text: `Live session saved as ${saved.trace?.name} and stopped.`, startedAt },
    });
  }
  useExplore.setState({
    savingLive: false,
    result: null,
    partial: [],
    savedAs: null,
    progress: { done: 0, total: spec.topologies.length * spec.modes.length, current: null, state: 'running' },
  });
  const reply = await sweepSend({ type: 'sweep', spec });
  if (reply.ok)
    useExplore.setState({
      running: false,
      result: reply.sweep ?? null,
      savedAs: reply.sweepFile?.name ?? null,
    });
  else useExplore.setState({ running: false, error: `${reply.error}: ${reply.message}` });
  await refreshSavedSweeps();
}

export async function cancelSweep(): Promise<void> {
  await sweepSend({ type: 'cancelSweep' });
}

export async function saveSweep(format: 'json' | 'csv'): Promise<void> {
  const reply = await sweepSend({ type: 'saveSweep', format });
  if (!reply.ok) useExplore.setState({ error: `${reply.error}: ${reply.message}` });
  else
    useExplore.setState({
      notice: `Saved ${reply.sweepFile!.name} (${reply.sweepFile!.path})`,
      savedAs: format === 'json' ? reply.sweepFile!.name : useExplore.getState().savedAs,
    });
}

export async function openSavedSweep(name: string): Promise<void> {
  const reply = await sweepSend({ type: 'openSweep', name });
  if (!reply.ok) useExplore.setState({ error: `${reply.error}: ${reply.message}` });
  else
    useExplore.setState({
      result: reply.sweep ?? null,
      partial: [],
      savedAs: name,
      error: null,
      progress: null,
    });
}

/** Opens a case's trace in the main window (the live session stays behind it). */
export async function openCaseTrace(c: SweepCase): Promise<void> {
  if (!c.trace) return;
  const reply = await send({ type: 'openTrace', name: c.trace });
  if (!reply.ok) useExplore.setState({ error: `${reply.error}: ${reply.message}` });
  else useExplore.setState({ open: false });
}
