// The lab as the window sees it: the live TopologySession, its recording (from
// each start, so a save is always complete) and, when a person opens a saved
// trace, a TraceReplay in front of it. It implements LabApi by routing each
// command through a handler table keyed by command type (commands/): trace
// commands here, the rest to the replay while one is open (it answers
// OFFLINE for what needs a topology); commands that start topologies of
// their own (compare, reproductions) here; the rest to the live session.
// Over 400 lines for now: routing, the live recording and the opened trace
// share one state (what the window is looking at); the next split is the
// trace half (save, open, seek, close, catch-up) into its own class behind
// commands/trace-commands.ts.
// Browser mode and Electron construct this instead of a TopologySession, and only
// the file choices differ (a traces folder and downloads, or dialogs).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { MAX_HISTORY_EVENTS } from '@shared/lab/contract';
import type {
  AnyCommand,
  CommandOf,
  LabApi,
  LabBatch,
  LabEvent,
  LabReply,
  LabView,
  ReplyOf,
  SavedTrace,
  TimelineMark,
  TraceCommand,
  TraceFileInfo,
  TraceStep,
} from '@shared/lab/contract';
import type { TopologyConfig } from '@shared/lab/topology';
import type { UnitRecord } from '@shared/lab/records';
import type { SessionSnapshot } from '@shared/lab/state';
import { MAX_EARLIER_RECORDS, TRACE_NAME } from '@shared/lab/validate';
import { bytesToHex } from '@shared/wire/bytes';
import { encodeEventLine } from './trace/ndjson-codec';
import { exportTraceFileToPcapng } from './trace/pcapng';
import { TraceReplay } from './trace/replay';
import type { TraceRecorder } from './trace/recorder';
import { RecordIndex } from './trace/record-index';
import { recordSession, type RecordableSession } from './trace/session-recording';
import type { EndEvent, LifecycleEvent } from './trace/format';
import {
  dispatch,
  isTopologyCommand,
  type HostCommandType,
  type TopologyCommand,
  type TopologyCommandType,
} from './commands/handler';
import { HOST_HANDLERS, type HostContext } from './commands/host-commands';
import { TRACE_HANDLERS } from './commands/trace-commands';
import { isSweepCommand } from '@shared/sweep/contract';
import { SweepHost } from '../sweep/sweep-host';
import { atomicWriteStream, copyFileAtomic, writeFileAtomic } from '../files/atomic-write';
import { ReproRecorder, type ActionStamp } from '../repro/session-recorder';

/** What the host needs of the live TopologySession (src-main/lab/topology-session.ts). */
export type LiveSession = RecordableSession & {
  command(cmd: TopologyCommand): Promise<ReplyOf<TopologyCommandType>>;
  stop(): Promise<void>;
  /** Where the rounds were when the command ran (Record's stamp); absent: the round before it ran. */
  stampOf?(cmd: object): ActionStamp | undefined;
};

const TRACE_COMMAND_TYPES: ReadonlySet<string> = new Set<keyof typeof TRACE_HANDLERS>([
  'saveTrace',
  'listTraces',
  'openTrace',
  'seekTrace',
  'stepTrace',
  'closeTrace',
  'recentRecords',
  'earlierRecords',
]);
/** Commands that touch no topology: answered while a reproduction holds the machine (runExclusive). */
const ANSWERED_DURING_EXCLUSIVE: ReadonlySet<string> = new Set(['snapshot', 'listScenarios', 'reproRecord']);

function isTraceCommand(cmd: AnyCommand): cmd is TraceCommand {
  return TRACE_COMMAND_TYPES.has(cmd.type);
}

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

export class LabHost implements LabApi, HostContext {
  private readonly listeners = new Set<(b: LabBatch) => void>();
  private recorder: TraceRecorder | null = null;
  private recordingPath: string | null = null;
  /** Where each unit of the recording sits in its file (kept after a stop, with the file). */
  private recordingIndex: RecordIndex | null = null;
  private replay: { name: string; file: string; api: TraceReplay; detach: () => void } | null = null;
  private readonly workDir: string;
  private recordingNumber = 0;
  /**
   * The recording of a session this host did not start (a Slurm job's run writes the job's
   * trace): the commands this host accepts are recorded there, as a window's are in its own.
   */
  private runRecorder: TraceRecorder | null = null;

  /** Sweeps run beside the live session, on their own clusters (src-main/sweep). */
  private readonly sweeps: SweepHost;

  constructor(
    readonly session: LiveSession,
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
      this.reproRecorder.observe(b);
      this.emitLive(b);
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

  /**
   * The session is recorded by its owner (a job's run, `relay-lab slurm`): the kills, pauses,
   * resumes, host kills and link faults this host accepts go to `recorder` as lifecycle lines,
   * the same a local session's recording gets (a start here records to its own, as ever).
   */
  recordCommandsTo(recorder: TraceRecorder | null): void {
    this.runRecorder = recorder;
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

  async command<C extends AnyCommand>(cmd: C): Promise<ReplyOf<C['type']>> {
    // Sweeps run beside the live session and any open trace (src-main/sweep).
    if (isSweepCommand(cmd)) return (await this.sweeps.command(cmd)) as ReplyOf<C['type']>;
    try {
      return (await this.route(cmd)) as ReplyOf<C['type']>;
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

  private async route(cmd: AnyCommand): Promise<LabReply> {
    if (isTraceCommand(cmd)) return dispatch(TRACE_HANDLERS, this, cmd);
    // Stop always reaches the live session: quitting while a trace is open must not leave processes behind.
    if (this.replay && cmd.type !== 'stop') return this.replay.api.command(cmd);
    if (cmd.type === 'getRecordBytes') return this.liveRecordBytes(cmd.seq);
    // While a reproduction runs (seconds to minutes), what touches no topology is answered at once;
    // the rest wait for it. Record's state is polled every second while Record is on: queued behind
    // a long replay, those queries once passed browser mode's 64 commands per client (BUSY).
    if (this.exclusive && !ANSWERED_DURING_EXCLUSIVE.has(cmd.type)) await this.exclusive.catch(() => {});
    if (!isTopologyCommand(cmd.type)) return dispatch(HOST_HANDLERS, this, cmd as CommandOf<HostCommandType>);
    return this.sessionCommand(cmd as TopologyCommand);
  }

  /** A command about the live topology: to the session, with the recording following it. */
  private async sessionCommand(cmd: TopologyCommand): Promise<LabReply> {
    if (cmd.type === 'start') await this.stopLive();
    const before = this.session.snapshot();
    const reply = await this.session.command(cmd);
    if (!reply.ok) return reply;
    // Record (repro-commands.ts): the session's actions, stamped with the round they came in, how
    // far into it and which ranks were dead then (src-main/repro/session-recorder.ts).
    if (cmd.type === 'start') this.reproRecorder.begin(this.session.snapshot());
    else
      this.reproRecorder.command(
        cmd,
        this.session.stampOf?.(cmd) ?? { round: before.round, t: performance.now(), dead: [] },
      );
    if (cmd.type === 'start') this.startRecording();
    else if (cmd.type === 'stop') await this.stopRecording();
    else (this.recorder ?? this.runRecorder)?.command(cmd);
    return reply;
  }

  // ---- HostContext: what compare and the reproductions need (commands/host-commands.ts) ----

  private exclusive: Promise<unknown> | null = null;

  /** What Record captures of the live session (src-main/repro/session-recorder.ts). */
  readonly reproRecorder = new ReproRecorder();

  emitLog(level: 'info' | 'warn' | 'error', message: string): void {
    this.emitLive({ events: [{ type: 'log', level, message }] });
  }

  tracePath(name: string): string {
    return path.join(this.ensureTracesDir(), name);
  }

  /** A reproduction file: to the path the person picks (Electron), or into the traces folder. */
  async writeFile(suggested: string, text: string): Promise<SavedTrace> {
    const dest = this.opts.chooseSavePath
      ? await this.opts.chooseSavePath(suggested)
      : this.tracePath(suggested);
    if (!dest) throw new TraceHostError('CANCELLED', 'the save was cancelled');
    await writeFileAtomic(dest, text);
    const name = path.basename(dest);
    const saved: SavedTrace = { name, path: dest, bytes: Buffer.byteLength(text), records: 0 };
    if (path.dirname(path.resolve(dest)) === path.resolve(this.opts.tracesDir) && this.opts.downloadUrl)
      saved.download = this.opts.downloadUrl(name);
    return saved;
  }

  liveConfig(): TopologyConfig {
    return this.session.snapshot().config;
  }

  /** Ends the live recording and its history: a new topology (a start, a reproduction) replaces it. */
  async stopLive(): Promise<void> {
    await this.stopRecording();
    this.history = [];
  }

  async stopSession(): Promise<void> {
    await this.session.command({ type: 'stop' });
  }

  /** Runs `work` alone: topology commands wait for it (a reproduction owns the machine's ports and processes). */
  async runExclusive<T>(work: () => Promise<T>): Promise<T> {
    while (this.exclusive) await this.exclusive.catch(() => {});
    const run = work();
    this.exclusive = run;
    try {
      return await run;
    } finally {
      this.exclusive = null;
    }
  }

  /** Events of a topology the host started itself, shown as live (a reproduction's). */
  emitLive(b: LabBatch): void {
    this.keepHistory(b);
    if (!this.replay) this.emit(b);
  }

  seekTrace(t: number): ReplyOf<'seekTrace'> {
    if (!this.replay) throw new TraceHostError('NO_TRACE', 'no trace is open');
    this.replay.api.seek(t);
    return { ok: true, view: this.view };
  }

  stepTrace(by: TraceStep, dir: 1 | -1): ReplyOf<'stepTrace'> {
    if (!this.replay) throw new TraceHostError('NO_TRACE', 'no trace is open');
    const target = this.replay.api.stepTarget(by, dir);
    if (target) this.replay.api.seek(target.t);
    return { ok: true, view: this.view, ...(target?.seq !== undefined ? { seq: target.seq } : {}) };
  }

  /** What a (re)connecting window needs: the recent records, the snapshot, the view and the history. */
  async catchUp(limit = DEFAULT_RECENT_RECORDS): Promise<ReplyOf<'recentRecords'>> {
    return {
      ok: true,
      records: this.recentRecords(limit),
      snapshot: await this.snapshot(),
      view: this.view,
      history: this.replayHistory() ?? this.liveHistory(),
    };
  }

  private async snapshot(): Promise<SessionSnapshot | undefined> {
    if (this.replay) {
      const reply = await this.replay.api.command({ type: 'snapshot' });
      return reply.ok ? reply.snapshot : undefined;
    }
    return this.liveSnapshot();
  }

  /** The live snapshot, through the session's command queue (it never interleaves with a start or stop). */
  private async liveSnapshot(): Promise<SessionSnapshot | undefined> {
    const reply = await this.session.command({ type: 'snapshot' });
    return reply.ok && 'snapshot' in reply ? reply.snapshot : undefined;
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
    if (this.history.length > MAX_HISTORY_EVENTS) this.history = trimHistory(this.history);
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
    this.recordingIndex = new RecordIndex(this.recordingPath);
    // The live recording is written in place (a save copies it while it grows, and units the
    // window let go are read back from it); the saves are atomic.
    this.recorder = recordSession(this.session, fs.createWriteStream(this.recordingPath), {
      producer: this.opts.producer,
      index: this.recordingIndex,
    });
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
  async saveTrace(format: 'ndjson' | 'pcapng'): Promise<SavedTrace> {
    // Export pcapng while a trace is open exports that trace (Save trace still saves the live session).
    if (this.replay && format === 'pcapng') return this.exportOpenedTrace(this.replay.file);
    const source = this.recordingPath;
    if (!source) throw new TraceHostError('NO_RECORDING', 'nothing to save: no session has run');
    return this.saveTraceVia(format, (ndjsonPath) => this.copyRecording(source, ndjsonPath));
  }

  /**
   * Saves a trace that `write` puts whole at the path it is given (NDJSON; it answers the
   * records in it) where Save trace saves: the person's pick (Electron's dialog) or the traces
   * folder; a pcapng is exported from it. Also the attached window's save of a job's trace.
   */
  async saveTraceVia(
    format: 'ndjson' | 'pcapng',
    write: (ndjsonPath: string) => Promise<number>,
  ): Promise<SavedTrace> {
    const suggested = suggestedTraceName(new Date(), format);
    const dest = this.opts.chooseSavePath
      ? await this.opts.chooseSavePath(suggested)
      : path.join(this.ensureTracesDir(), suggested);
    if (!dest) throw new TraceHostError('CANCELLED', 'the save was cancelled');
    const ndjsonPath =
      format === 'ndjson' ? dest : path.join(this.workDir, `export-${Date.now()}.trace.ndjson`);
    const records = await write(ndjsonPath);
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

  /** The opened trace's units as a pcapng (the trace itself is a file already: no NDJSON copy). */
  private async exportOpenedTrace(file: string): Promise<SavedTrace> {
    const base = path.basename(file).replace(/\.trace\.ndjson$|\.ndjson$/, '');
    const dest = this.opts.chooseSavePath
      ? await this.opts.chooseSavePath(`${base}.pcapng`)
      : this.freshName(base, '.pcapng');
    if (!dest) throw new TraceHostError('CANCELLED', 'the save was cancelled');
    const stats = await exportTraceFileToPcapng(file, dest);
    const name = path.basename(dest);
    const inFolder = path.dirname(path.resolve(dest)) === path.resolve(this.opts.tracesDir);
    const saved: SavedTrace = { name, path: dest, bytes: fs.statSync(dest).size, records: stats.units };
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
      await copyFileAtomic(source, dest);
      const endLine = (await fs.promises.readFile(source, 'utf8')).trimEnd().split('\n').pop() ?? '';
      return (JSON.parse(endLine) as { records?: number }).records ?? 0;
    }
    // The copy and its end line appear together (a save never leaves half a file at dest).
    const endLine = encodeEventLine(cut.end);
    await pipeline(
      fs.createReadStream(source, { start: 0, end: cut.bytes - 1 }),
      async function* (copied: AsyncIterable<Buffer>) {
        yield* copied;
        yield Buffer.from(endLine);
      },
      atomicWriteStream(dest),
    );
    return cut.end.records;
  }

  /** A file of the traces folder that does not exist yet: base.ext, else base-2.ext, ... */
  private freshName(base: string, ext: string): string {
    const dir = this.ensureTracesDir();
    for (let n = 1; ; n++) {
      const candidate = path.join(dir, `${base}${n === 1 ? '' : `-${n}`}${ext}`);
      if (!fs.existsSync(candidate)) return candidate;
    }
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
  async openTrace(name: string | undefined): Promise<ReplyOf<'openTrace'>> {
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
    this.replay = { name, file, api, detach };
    api.seek(api.duration);
  }

  /** A replay's seek batch for the window: the view first, then the snapshot that resets the stores. */
  private seekBatch(b: LabBatch): LabBatch {
    const events: LabEvent[] = b.events.map((e) => (e.type === 'snapshot' ? { ...e, reset: true } : e));
    return { events: [{ type: 'view', view: this.view }, ...events] };
  }

  async closeTrace(): Promise<ReplyOf<'closeTrace'>> {
    // The live snapshot first: live batches stay held back until the window has the resetting batch.
    const snapshot = await this.liveSnapshot();
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

  /**
   * A live unit's bytes: the tap's while it holds all it captured, else the recording's (the tap
   * lets old units go; the recording has every unit with the bytes the snap length kept).
   */
  private async liveRecordBytes(seq: number): Promise<LabReply> {
    const fromTap = await this.session.command({ type: 'getRecordBytes', seq });
    if (fromTap.ok) return fromTap;
    const e = await this.recordingIndex?.read(seq);
    if (!e) return fromTap;
    return {
      ok: true,
      record: e.record,
      bytes: {
        seq,
        hex: bytesToHex(e.bytes),
        length: e.record.length,
        captured: e.bytes.length,
        saltHex: this.session.snapshot().saltHex,
      },
    };
  }

  /** The newest `limit` units before seq `before`, oldest first: the trace's (up to its time) or the recording's. */
  async earlierRecords(before: number, limit = MAX_EARLIER_RECORDS): Promise<UnitRecord[]> {
    if (this.replay) return this.replay.api.recordsBefore(before, limit);
    const index = this.recordingIndex;
    if (!index) return [];
    const from = Math.max(0, before - limit);
    return index.records(from, before - from);
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

/** Findings kept in the catch-up whatever number of rounds follows them (the window keeps 500). */
const MAX_HISTORY_FINDINGS = 500;

/**
 * The history cut to MAX_HISTORY_EVENTS rounds and counters, oldest dropped, findings kept (up to
 * their own bound) in their place: rounds come a few times a second and pushed a session's early
 * findings (a rank declared dead) out, so a window back from a tap or a capture showed 0 findings
 * while the rank was still dead.
 */
export function trimHistory(history: readonly LabEvent[]): LabEvent[] {
  const findings = history.filter((e) => e.type === 'finding').length;
  let dropFindings = Math.max(0, findings - MAX_HISTORY_FINDINGS);
  let dropOthers = Math.max(0, history.length - findings - MAX_HISTORY_EVENTS);
  return history.filter((e) => {
    if (e.type === 'finding') return dropFindings-- <= 0;
    return dropOthers-- <= 0;
  });
}
