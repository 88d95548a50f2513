// The lab as the window sees it: the live LabSession, its recording (from
// each start, so a save is always complete) and, when a person opens a saved
// trace, a TraceReplay in front of it. It implements LabApi by routing each
// command: trace commands here, the rest to the replay while one is open
// (it answers OFFLINE for what needs a topology) or to the live session.
// Browser mode and Electron construct this instead of a LabSession, and only
// the file choices differ (a traces folder and downloads, or dialogs).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { MAX_HISTORY_EVENTS } from '@shared/lab/contract';
import type {
  LabApi,
  LabBatch,
  LabCommand,
  LabEvent,
  LabReply,
  LabView,
  LinkFault,
  SavedTrace,
  TraceCommand,
  TimelineMark,
  TraceFileInfo,
} from '@shared/lab/contract';
import type { UnitRecord } from '@shared/lab/records';
import { TRACE_NAME } from '@shared/lab/validate';
import { encodeEventLine } from './trace/ndjson-codec';
import { exportTraceFileToPcapng } from './trace/pcapng';
import { TraceReplay } from './trace/replay';
import type { TraceRecorder } from './trace/recorder';
import { recordSession, type RecordableSession } from './trace/session-recording';
import type { EndEvent, LifecycleEvent } from './trace/format';
import { isSweepCommand, type SweepCommand } from '@shared/sweep/contract';
import { SweepHost } from '../sweep/sweep-host';

/** What the host needs of a LabSession (src-main/lab/session.ts). */
export type HostedSession = LabApi & RecordableSession & { stop(): Promise<void> };

export interface LabHostOptions {
  /** Where saves go and where `listTraces` / `openTrace {name}` look. Created on first use. */
  tracesDir: string;
  /** Electron: a save dialog. Returns the path to write, or null when the person cancelled. Default: tracesDir/suggested. */
  chooseSavePath?: (suggested: string) => Promise<string | null>;
  /** Electron: an open dialog for `openTrace` without a name. */
  chooseOpenPath?: () => Promise<string | null>;
  /** Browser mode: the URL that downloads a saved file of the traces folder. */
  downloadUrl?: (name: string) => string;
  /** Folder for the running recording (default: a fresh folder under the OS temp dir). */
  workDir?: string;
  producer?: string;
  /** The recording stops (closed cleanly) once its file reaches this size (default DEFAULT_MAX_RECORDING_BYTES). */
  maxRecordingBytes?: number;
}

/**
 * A model-sized unit keeps up to the tap's snap length (64 KiB) of bytes, so
 * the default topology records about 1 MB per second (measured: 17 MiB in
 * 22 s on a loaded 2-core machine): 4 GiB is about an hour of it.
 */
export const DEFAULT_MAX_RECORDING_BYTES = 4 * 1024 ** 3;

export const DEFAULT_RECENT_RECORDS = 5000;

/** Where saved traces go unless a flag says otherwise. */
export function defaultTracesDir(): string {
  return path.join(os.homedir(), 'relay-lab-traces');
}

export class TraceHostError extends Error {
  constructor(
    readonly code: 'NO_RECORDING' | 'CANCELLED' | 'NO_TRACE' | 'NOT_FOUND' | 'BAD_TRACE' | 'NOT_SUPPORTED',
    message: string,
  ) {
    super(message);
    this.name = 'TraceHostError';
  }
}

/** `relay-lab-20260102-030405.trace.ndjson` for a save at that (UTC) time. */
export function suggestedTraceName(at: Date, ext: 'ndjson' | 'pcapng'): string {
  const stamp = at.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `relay-lab-${stamp}.trace.${ext}`;
}

function faultKind(f: LinkFault): string {
  for (const k of [
    'blackhole',
    'reset',
    'corruptNext',
    'stallMs',
    'sliceBytes',
    'bandwidth',
    'latencyMs',
  ] as const)
    if (f[k] !== undefined && f[k] !== false)
      return k === 'latencyMs' ? 'latency' : k === 'stallMs' ? 'stall' : k === 'sliceBytes' ? 'slicer' : k;
  return 'none';
}

function markLabel(e: LifecycleEvent): string {
  const who =
    e.rank !== undefined
      ? ` rank ${e.rank}`
      : e.host !== undefined
        ? ` h${e.host}`
        : e.link
          ? ` ${e.link}`
          : '';
  const what = e.fault ? ` ${e.fault.kind}` : '';
  return `${e.action}${who}${what}`;
}

export class LabHost implements LabApi {
  private readonly listeners = new Set<(b: LabBatch) => void>();
  private recorder: TraceRecorder | null = null;
  private recordingPath: string | null = null;
  private replay: { name: string; api: TraceReplay; detach: () => void } | null = null;
  private readonly workDir: string;
  private recordingNumber = 0;
  /** Sweeps run beside the live session, on their own clusters (src-main/sweep). */
  private readonly sweeps: SweepHost;

  constructor(
    readonly session: HostedSession,
    private readonly opts: LabHostOptions,
  ) {
    this.sweeps = new SweepHost({
      tracesDir: opts.tracesDir,
      producer: opts.producer,
      emit: (b) => this.emit(b),
    });
    this.workDir = opts.workDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-recording-'));
    // Live events reach the window only while no trace is open; the recording listens to the session itself.
    session.subscribe((b) => {
      this.keepHistory(b);
      if (!this.replay) this.emit(b);
    });
  }

  get view(): LabView {
    const r = this.replay;
    if (!r) return { kind: 'live' };
    const marks: TimelineMark[] = r.api
      .lifecycleUntil(r.api.duration)
      .map((e) => ({ t: e.t, action: e.action, label: markLabel(e) }));
    return {
      kind: 'trace',
      name: r.name,
      duration: r.api.duration,
      t: r.api.time,
      complete: r.api.complete,
      marks,
    };
  }

  /** The file the running session is being recorded to (null before a start). */
  get recordingFile(): string | null {
    return this.recordingPath;
  }

  subscribe(listener: (batch: LabBatch) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(b: LabBatch): void {
    for (const l of this.listeners) l(b);
  }

  async command(cmd: LabCommand | TraceCommand | SweepCommand): Promise<LabReply> {
    if (isSweepCommand(cmd)) return this.sweeps.command(cmd);
    try {
      return await this.route(cmd);
    } catch (e) {
      if (e instanceof TraceHostError) return { ok: false, error: e.code, message: e.message };
      const code = (e as { code?: unknown }).code;
      return {
        ok: false,
        error: typeof code === 'string' ? code : 'COMMAND_FAILED',
        message: e instanceof Error ? e.message : String(e),
      };
    }
  }

  private async route(cmd: LabCommand | TraceCommand): Promise<LabReply> {
    switch (cmd.type) {
      case 'saveTrace':
        return { ok: true, trace: await this.save(cmd.format) };
      case 'listTraces':
        return { ok: true, traces: this.listTraces() };
      case 'openTrace':
        return this.open(cmd.name);
      case 'seekTrace': {
        if (!this.replay) throw new TraceHostError('NO_TRACE', 'no trace is open');
        this.replay.api.seek(cmd.t);
        return { ok: true, view: this.view };
      }
      case 'closeTrace':
        return this.close();
      case 'recentRecords':
        return {
          ok: true,
          records: this.recentRecords(cmd.limit ?? DEFAULT_RECENT_RECORDS),
          snapshot: await this.snapshot(),
          view: this.view,
          history: this.replayHistory() ?? this.liveHistory(),
        };
    }
    // Stop always reaches the live session: quitting while a trace is open must not leave processes behind.
    if (this.replay && cmd.type !== 'stop') return this.replay.api.command(cmd);
    // A reproduction replaces the topology with its own: the recording ends with the session it recorded.
    if (cmd.type === 'start' || cmd.type === 'runScenario') {
      await this.stopRecording();
      this.history = [];
    }
    const reply = await this.session.command(cmd);
    if (!reply.ok) return reply;
    if (cmd.type === 'start') this.startRecording();
    else if (cmd.type === 'stop') await this.stopRecording();
    else if (cmd.type === 'setLinkFault') {
      const f = cmd.fault;
      this.recorder?.lifecycle(
        f
          ? {
              action: 'faultApplied',
              link: cmd.link,
              ...(f.dir === 'both' ? {} : { dir: f.dir }),
              fault: { ...f, kind: faultKind(f) },
            }
          : { action: 'faultCleared', link: cmd.link },
      );
    } else this.recorder?.command(cmd);
    return reply;
  }

  private async snapshot() {
    const reply = this.replay
      ? await this.replay.api.command({ type: 'snapshot' })
      : await this.session.command({ type: 'snapshot' });
    return reply.ok ? reply.snapshot : undefined;
  }

  private budgetTimer: ReturnType<typeof setInterval> | null = null;
  private history: LabEvent[] = [];
  private historyStartedAt: number | null = null;

  /** The live session's recent rounds, findings and the counters each round was made against (for catch-up). */
  private keepHistory(b: LabBatch): void {
    for (const e of b.events) {
      if (e.type === 'snapshot') {
        if (this.historyStartedAt !== e.snapshot.startedAt) this.history = [];
        this.historyStartedAt = e.snapshot.startedAt;
      } else if (e.type === 'round' || e.type === 'finding') this.history.push(e);
      else if (e.type === 'links') {
        const last = this.history.at(-1);
        if (last?.type === 'links') this.history.pop();
        this.history.push(e);
      }
    }
    if (this.history.length > MAX_HISTORY_EVENTS)
      this.history.splice(0, this.history.length - MAX_HISTORY_EVENTS);
  }

  private liveHistory(): LabEvent[] {
    return this.replay ? [] : this.history.slice();
  }

  private startRecording(): void {
    if (!this.session.activeCluster) return;
    // Only the current session's recording is kept: the previous one goes with its session.
    if (this.recordingPath) fs.rmSync(this.recordingPath, { force: true });
    this.recordingNumber += 1;
    this.recordingPath = path.join(this.workDir, `session-${this.recordingNumber}.trace.ndjson`);
    this.recorder = recordSession(this.session, this.recordingPath, { producer: this.opts.producer });
    this.recorder.lifecycle({ action: 'start', t: 0 });
    const max = this.opts.maxRecordingBytes ?? DEFAULT_MAX_RECORDING_BYTES;
    this.budgetTimer ??= setInterval(() => void this.checkBudget(max), 1000);
    this.budgetTimer.unref?.();
  }

  /** A recording past its budget is closed (a save then holds the session up to that point) and the window told why. */
  private async checkBudget(max: number): Promise<void> {
    const rec = this.recorder;
    if (!rec || rec.writer.position().bytes < max) return;
    await this.stopRecording();
    const message = `trace recording stopped at ${Math.round(max / 1024 ** 2)} MiB: a save holds the session up to here`;
    if (!this.replay) this.emit({ events: [{ type: 'log', level: 'warn', message }] });
  }

  private async stopRecording(): Promise<void> {
    const rec = this.recorder;
    this.recorder = null;
    if (this.budgetTimer) clearInterval(this.budgetTimer);
    this.budgetTimer = null;
    // The file stays until the next start: a stopped session can still be saved.
    if (rec) await rec.close().catch(() => {});
  }

  /** Copies the recording as it stands now, closed with an end line; pcapng is exported from that copy. */
  private async save(format: 'ndjson' | 'pcapng'): Promise<SavedTrace> {
    const source = this.recordingPath;
    if (!source) throw new TraceHostError('NO_RECORDING', 'nothing to save: no session has run');
    const suggested = suggestedTraceName(new Date(), format);
    const dest = this.opts.chooseSavePath
      ? await this.opts.chooseSavePath(suggested)
      : path.join(this.ensureTracesDir(), suggested);
    if (!dest) throw new TraceHostError('CANCELLED', 'the save was cancelled');
    const ndjsonPath =
      format === 'ndjson' ? dest : path.join(this.workDir, `export-${Date.now()}.trace.ndjson`);
    const records = await this.copyRecording(source, ndjsonPath);
    if (format === 'pcapng') {
      try {
        await exportTraceFileToPcapng(ndjsonPath, dest);
      } finally {
        fs.rmSync(ndjsonPath, { force: true });
      }
    }
    const name = path.basename(dest);
    const inFolder = path.dirname(path.resolve(dest)) === path.resolve(this.opts.tracesDir);
    const saved: SavedTrace = { name, path: dest, bytes: fs.statSync(dest).size, records };
    if (inFolder && this.opts.downloadUrl) saved.download = this.opts.downloadUrl(name);
    return saved;
  }

  private async copyRecording(source: string, dest: string): Promise<number> {
    const rec = this.recorder;
    let cut: { bytes: number; end: EndEvent } | null = null;
    if (rec) {
      cut = rec.writer.position();
      await rec.writer.flushed();
    }
    if (!cut) {
      // A closed recording already ends with its end line.
      await fs.promises.copyFile(source, dest);
      const endLine = (await fs.promises.readFile(source, 'utf8')).trimEnd().split('\n').pop() ?? '';
      return (JSON.parse(endLine) as { records?: number }).records ?? 0;
    }
    await pipeline(fs.createReadStream(source, { start: 0, end: cut.bytes - 1 }), fs.createWriteStream(dest));
    await fs.promises.appendFile(dest, encodeEventLine(cut.end));
    return cut.end.records;
  }

  private ensureTracesDir(): string {
    fs.mkdirSync(this.opts.tracesDir, { recursive: true });
    return this.opts.tracesDir;
  }

  listTraces(): TraceFileInfo[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.opts.tracesDir);
    } catch {
      return [];
    }
    return names
      .filter((n) => TRACE_NAME.test(n))
      .flatMap((name) => {
        try {
          const st = fs.statSync(path.join(this.opts.tracesDir, name));
          return st.isFile() ? [{ name, bytes: st.size, modifiedAt: st.mtimeMs }] : [];
        } catch {
          return [];
        }
      })
      .sort((a, b) => b.modifiedAt - a.modifiedAt);
  }

  /** Opens a trace of the traces folder by name, or (no name) whatever the open dialog picks. */
  private async open(name: string | undefined): Promise<LabReply> {
    let file: string | null;
    if (name !== undefined) {
      if (!TRACE_NAME.test(name)) throw new TraceHostError('NOT_FOUND', `'${name}' is not a trace file name`);
      file = path.join(this.opts.tracesDir, name);
      // Only a file of the folder itself: a link there could name any file this user can read.
      let stat: fs.Stats;
      try {
        stat = fs.lstatSync(file);
      } catch {
        throw new TraceHostError('NOT_FOUND', `no trace '${name}' in ${this.opts.tracesDir}`);
      }
      if (stat.isSymbolicLink())
        throw new TraceHostError('NOT_FOUND', `'${name}' is a symbolic link; only files are opened`);
      if (!stat.isFile()) throw new TraceHostError('NOT_FOUND', `'${name}' is not a file`);
    } else {
      if (!this.opts.chooseOpenPath)
        throw new TraceHostError('NOT_SUPPORTED', 'name a trace of the traces folder');
      file = await this.opts.chooseOpenPath();
      if (!file) throw new TraceHostError('CANCELLED', 'the open was cancelled');
    }
    await this.openFile(file);
    return { ok: true, view: this.view };
  }

  /** Opens a trace file (any path: `--trace FILE` at launch, a dialog's pick) and shows it at its end. */
  async openFile(file: string): Promise<void> {
    const api = await TraceReplay.fromFile(file);
    this.replay?.detach();
    const name = path.basename(file);
    const detach = api.subscribe((b) => this.emit(this.seekBatch(b)));
    this.replay = { name, api, detach };
    api.seek(api.duration);
  }

  /** A replay's seek batch for the window: the view first, then the snapshot that resets the stores. */
  private seekBatch(b: LabBatch): LabBatch {
    const events: LabEvent[] = b.events.map((e) => (e.type === 'snapshot' ? { ...e, reset: true } : e));
    return { events: [{ type: 'view', view: this.view }, ...events] };
  }

  private async close(): Promise<LabReply> {
    // The live snapshot first: live batches stay held back until the window has the resetting batch.
    const reply = await this.session.command({ type: 'snapshot' });
    const snapshot = reply.ok ? reply.snapshot : undefined;
    if (this.replay) {
      this.replay.detach();
      this.replay = null;
    }
    const events: LabEvent[] = [{ type: 'view', view: this.view }];
    if (snapshot) events.push({ type: 'snapshot', snapshot, reset: true });
    events.push(...this.liveHistory());
    const records = this.recentRecords(DEFAULT_RECENT_RECORDS);
    if (records.length) events.push({ type: 'records', records, droppedBefore: 0 });
    this.emit({ events });
    return { ok: true, view: this.view, snapshot };
  }

  /** An open trace's rounds, findings and counters up to its current time (null when live). */
  private replayHistory(): LabEvent[] | null {
    if (!this.replay) return null;
    return this.replay.api
      .labEventsUntil(this.replay.api.time)
      .filter((e) => e.type === 'round' || e.type === 'finding' || e.type === 'links')
      .slice(-MAX_HISTORY_EVENTS);
  }

  /** The last `limit` records the window would have now: the tap's (live) or the trace's up to the current time. */
  recentRecords(limit: number): UnitRecord[] {
    if (this.replay) {
      const all: UnitRecord[] = [];
      for (const e of this.replay.api.labEventsUntil(this.replay.api.time))
        if (e.type === 'records') all.push(...e.records);
      return all.slice(-limit);
    }
    const tap = this.session.activeCluster?.tap;
    if (!tap) return [];
    const out: UnitRecord[] = [];
    for (let seq = tap.recordCount - 1; seq >= 0 && out.length < limit; seq--) {
      const held = tap.bytesOf(seq);
      if (!held) break;
      out.push(held.record);
    }
    return out.reverse();
  }

  /** Removes the recording folder (synchronous: safe in a process 'exit' handler). */
  removeWorkDir(): void {
    if (!this.opts.workDir) fs.rmSync(this.workDir, { recursive: true, force: true });
  }

  /** Stops the session and its recording, and removes the recording folder. */
  async shutdown(): Promise<void> {
    this.sweeps.shutdown();
    await this.session.command({ type: 'stop' }).catch(() => {});
    await this.stopRecording();
    this.replay?.detach();
    this.removeWorkDir();
  }
}
