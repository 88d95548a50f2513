// The one contract between the lab's engine and any front end. Electron IPC
// and browser mode's WebSocket both carry exactly these commands and events;
// the renderer does not know which transport it talks to.
import type { TopologyConfig, UplinkMode } from './topology';
import type { SessionSnapshot, LinkView } from './state';
import type { UnitRecord, Finding, RoundReport } from './records';
import type { SweepEvent } from '../sweep/contract';
import type { SweepResult, SweepSpec } from '../sweep/types';
import type { ReproRecordingState, ReproRunView, RunPicture } from '../repro/picture';

/** A command or reply with no fields of its own. */
type NoFields = object;

/**
 * Every command the window can send, keyed by its `type`: the fields it
 * carries and the fields of its `ok: true` reply. Adding a command is one
 * entry here, one entry in the validator table (validate.ts) and one handler
 * (src-main/lab/commands/); the compiler finds any of the three missing.
 */
export interface LabCommandSpecs {
  start: { command: { config?: Partial<TopologyConfig> }; reply: { snapshot: SessionSnapshot } };
  stop: { command: NoFields; reply: { snapshot: SessionSnapshot } };
  snapshot: { command: NoFields; reply: { snapshot: SessionSnapshot } };
  killRank: { command: { rank: number }; reply: NoFields };
  pauseRank: { command: { rank: number }; reply: NoFields };
  resumeRank: { command: { rank: number }; reply: NoFields };
  killHost: { command: { host: number }; reply: NoFields };
  pauseRounds: { command: NoFields; reply: NoFields };
  resumeRounds: { command: NoFields; reply: NoFields };
  stepRound: { command: NoFields; reply: NoFields };
  setSpeed: { command: { roundIntervalMs: number }; reply: NoFields };
  /**
   * A unit's captured bytes by seq, with its record: from the tap while it holds them, else read
   * back from the session's trace on disk (every unit of a recorded session stays inspectable).
   */
  getRecordBytes: { command: { seq: number }; reply: { bytes: RecordBytes; record?: UnitRecord } };
  setLinkFault: { command: { link: string; fault: LinkFault | null }; reply: NoFields };
  compareModes: {
    command: { config?: Partial<TopologyConfig>; rounds?: number };
    reply: { compare: CompareRow[] };
  };
  listScenarios: { command: NoFields; reply: { scenarios: ScenarioInfo[] } };
  runScenario: { command: { name: string }; reply: { scenario: ScenarioResult } };
  /** Record (docs/reproduction-format.md): capture the live session's actions, stamped with rounds (no `on`: just the state). */
  reproRecord: { command: { on?: boolean }; reply: { recording: ReproRecordingState } };
  /** The reproduction file of what was recorded, as JSON text for the person to edit. */
  draftRepro: { command: NoFields; reply: { text: string; recording: ReproRecordingState } };
  /** Writes a (possibly edited) reproduction file, checked first (a format error names its path). */
  saveRepro: { command: { text: string }; reply: { file: SavedTrace } };
  /** Replays a reproduction file headless beside the paused live session, recorded as a trace. */
  runRepro: { command: { text: string }; reply: { run: ReproRunView } };
}

/**
 * Traces (docs/trace-format.md): save the live session, open a saved one,
 * scrub it, and catch up on records after a (re)connect. The lab host
 * (src-main/lab/lab-host.ts) answers these; the session never sees them.
 */
export interface TraceCommandSpecs {
  saveTrace: { command: { format: 'ndjson' | 'pcapng' }; reply: { trace: SavedTrace } };
  listTraces: { command: NoFields; reply: { traces: TraceFileInfo[] } };
  openTrace: { command: { name?: string }; reply: { view: LabView } };
  seekTrace: { command: { t: number }; reply: { view: LabView } };
  /**
   * Moves an open trace to the next (dir 1) or previous (dir -1) unit,
   * round report or finding. `seq`: the unit stepped to (by 'unit'), for the
   * window to select. At either end the view stays where it is.
   */
  stepTrace: { command: { by: TraceStep; dir: 1 | -1 }; reply: { view: LabView; seq?: number } };
  closeTrace: { command: NoFields; reply: { view: LabView; snapshot?: SessionSnapshot } };
  /**
   * Units of the session (live: read back from its recording; a trace: up to its time) with seq
   * below `before`, the newest `limit` of them, oldest first: the list's rows the window let go.
   */
  earlierRecords: { command: { before: number; limit?: number }; reply: { records: UnitRecord[] } };
  recentRecords: {
    command: { limit?: number };
    reply: { records: UnitRecord[]; snapshot?: SessionSnapshot; view: LabView; history: LabEvent[] };
  };
}

/**
 * Sweeps (src-shared/sweep/contract.ts): topologies x modes run one after
 * another beside the live session; the lab host hands them to src-main/sweep.
 */
export interface SweepCommandSpecs {
  sweep: { command: { spec: SweepSpec }; reply: { sweep: SweepResult; sweepFile?: SavedTrace } };
  cancelSweep: { command: NoFields; reply: NoFields };
  saveSweep: { command: { format: 'json' | 'csv' }; reply: { sweepFile: SavedTrace } };
  listSweeps: { command: NoFields; reply: { sweeps: TraceFileInfo[] } };
  openSweep: { command: { name: string }; reply: { sweep: SweepResult } };
}

/**
 * Taps (docs/tap-and-capture.md): live taps on a real flodl cluster's
 * connections, shown as a source of their own beside the lab's topology, and
 * captures (pcap/pcapng) opened as traces. src-main/lab/tap-router.ts answers
 * these; the lab host and the session never see them.
 */
export interface TapCommandSpecs {
  startTap: { command: { tap: TapSpec }; reply: { taps: TapInfo[]; view: LabView } };
  stopTap: { command: { id: number }; reply: { taps: TapInfo[] } };
  listTaps: { command: NoFields; reply: { taps: TapInfo[] } };
  /** Switch the window to the taps' view (it keeps the lab's topology running; closeTrace returns to it). */
  showTaps: { command: NoFields; reply: { view: LabView } };
  /** Import a pcap/pcapng (of the traces folder by name, or a file dialog's pick) and open it as a trace. */
  openCapture: {
    command: { name?: string; saltHex: string };
    reply: { view: LabView; capture: CaptureSummary };
  };
}

/**
 * Attaching the window to a topology that runs elsewhere (a Slurm job's engine,
 * src-main/slurm/watch-server.ts): src-main/lab/attach-router.ts answers these.
 * `address` is HOST:PORT of the job's watch server (an SSH tunnel's local end
 * across machines), `token` the job's (its folder's watch.json).
 */
export interface AttachCommandSpecs {
  attach: { command: { address: string; token: string }; reply: { view: LabView } };
  /** Back to the lab's own topology (it kept running). */
  detach: { command: NoFields; reply: { view: LabView } };
  /**
   * The job's trace, one piece at a time, from its watch server (what Save trace saves while
   * attached; the window's attach router asks, a renderer never does). The first request (offset
   * 0, no `until`) fixes the length served; the later ones name it. No file is ever named: the
   * server serves its job's trace and nothing else.
   */
  jobTrace: { command: { offset: number; until?: number }; reply: { chunk: JobTraceChunk } };
}

/**
 * A piece of a Slurm job's trace (`jobTrace`). `until`: the length served, a whole-record
 * boundary the job's engine had written out when the first request came. `data`: base64 of the
 * bytes from the request's offset (at most the server's piece size, never past `until`).
 * The first piece also says how the trace is closed: `endLine` follows byte `until` ('' when
 * those bytes end with the job's own end line: its trace was closed), and `records` is the
 * count of units in it.
 */
export interface JobTraceChunk {
  until: number;
  data: string;
  endLine?: string;
  records?: number;
}

export type CommandSpecs = LabCommandSpecs &
  TraceCommandSpecs &
  SweepCommandSpecs &
  TapCommandSpecs &
  AttachCommandSpecs;
export type CommandType = keyof CommandSpecs;
/** The command of one type, e.g. `CommandOf<'killRank'>` is `{ type: 'killRank'; rank: number }`. */
export type CommandOf<T extends CommandType> = { type: T } & CommandSpecs[T]['command'];
/** The failure every command may answer: a named error code and one line for a person. */
export interface LabFailure {
  ok: false;
  error: string;
  message: string;
}
/** What a command of type T answers. */
export type ReplyOf<T extends CommandType> = ({ ok: true } & CommandSpecs[T]['reply']) | LabFailure;

/** The union of the commands of the types K (a discriminated union on `type`). */
export type CommandUnion<K extends CommandType> = { [T in K]: CommandOf<T> }[K];
export type LabCommand = CommandUnion<keyof LabCommandSpecs>;
export type TraceCommand = CommandUnion<keyof TraceCommandSpecs>;
export type SweepCommandUnion = CommandUnion<keyof SweepCommandSpecs>;
export type TapCommand = CommandUnion<keyof TapCommandSpecs>;
export type AttachCommand = CommandUnion<keyof AttachCommandSpecs>;
export type AnyCommand = LabCommand | TraceCommand | SweepCommandUnion | TapCommand | AttachCommand;
/** Any command's reply (what a transport carries without knowing the command). */
export type LabReply = ReplyOf<CommandType>;

/**
 * A fault on one link (a LinkView id), applied live at the engine's end of
 * the connection. `dir` says which way it acts. One-shot actions
 * (corruptNext, reset) fire once; the others hold until the fault is cleared.
 */
export interface LinkFault {
  dir: 'up' | 'down' | 'both';
  latencyMs?: number;
  jitterMs?: number;
  /** Bandwidth cap in bytes per second. */
  bandwidth?: number;
  /** Cut the stream into pieces of this many bytes... */
  sliceBytes?: number;
  /** ...with this gap between pieces (readers must reassemble). */
  sliceGapMs?: number;
  /** Outbound only: pause this long between the next record's header and its payload (a mid-frame stall). */
  stallMs?: number;
  /** Flip one bit of the next unit. */
  corruptNext?: boolean;
  /**
   * Links whose faults name the same key share one bandwidth/latency
   * schedule per direction (one host's NIC) instead of one each.
   */
  shareKey?: string;
  /** Reset the connection now. */
  reset?: boolean;
  /** Bytes are accepted and never delivered. */
  blackhole?: boolean;
}

export interface CompareRow {
  mode: UplinkMode;
  labOnly: boolean;
  rounds: number;
  uplinkBytesPerHostPerRound: number[];
  /** Measured ratio of this mode's uplink bytes to direct's, per host. */
  ratioToDirect: number[];
  /**
   * The wire format's ratio to direct, headers included (src-shared/sweep/theory.ts): fold
   * (25 + F) / (K x (4 + F)), forward (25 + F) / (4 + F), direct 1.
   */
  theoryRatio: number[];
  msPerRound: number;
}

export interface RecordBytes {
  seq: number;
  /** Lowercase hex of the captured bytes. */
  hex: string;
  length: number;
  captured: number;
  saltHex: string;
}

export type LabEvent =
  /** `reset`: the window drops what it holds first (a trace seek starts with one). */
  /**
   * `reset`: the window drops what it holds first (a trace seek starts with one).
   * `t` (snapshot, links): the trace's clock (ms since its start) when the
   * state comes from a saved trace; the window measures rates on it, not on
   * its own clock (a seek delivers seconds of trace in one batch).
   */
  | { type: 'snapshot'; snapshot: SessionSnapshot; reset?: boolean; t?: number }
  | { type: 'view'; view: LabView }
  | { type: 'records'; records: UnitRecord[]; droppedBefore: number }
  | { type: 'links'; links: LinkView[]; t?: number }
  | { type: 'round'; report: RoundReport }
  | { type: 'finding'; finding: Finding }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string }
  /** A running sweep's progress (src-shared/sweep/contract.ts). */
  | SweepEvent;

/** At most one batch per animation frame goes to a front end. */
export interface LabBatch {
  events: LabEvent[];
}

export interface LabApi {
  /** The reply's type follows the command's: `command({ type: 'snapshot' })` answers `ReplyOf<'snapshot'>`. */
  command<C extends AnyCommand>(cmd: C): Promise<ReplyOf<C['type']>>;
  subscribe(listener: (batch: LabBatch) => void): () => void;
}

// ---- Taps and captures ----

/** One live tap as the window asks for it (`npm start -- --tap`, the "Tap a cluster" dialog). */
export interface TapSpec {
  /** Where the tap listens; the peer that used to dial `upstream` dials this instead. */
  listenHost: string;
  listenPort: number;
  upstreamHost: string;
  upstreamPort: number;
  /** The cluster's session salt (32 hex digits): every MAC is verified with it. */
  saltHex: string;
  /** Link name prefix, e.g. "h0.uplink" (the channel is appended); default: named from the Hello or handshake. */
  name?: string;
}

export interface TapInfo extends TapSpec {
  id: number;
  /** The port actually bound (listenPort 0 asks for any free one). */
  boundPort: number;
  /** listening; stopping: the listener is closed, connections already open are still forwarded until they end. */
  state: 'listening' | 'stopping' | 'stopped';
  connections: number;
  units: number;
  undecodable: number;
  gaps: number;
  bytes: number;
}

/** What an imported capture held (`openCapture`). */
export interface CaptureSummary {
  name: string;
  streams: number;
  units: number;
  undecodable: number;
  gapBytes: number;
}

// ---- Traces ----

/** What `stepTrace` steps by. */
export type TraceStep = 'unit' | 'round' | 'finding';

/** What the window shows: the live lab, or a saved trace at time `t` of `duration` (ms since its start). */
export type LabView =
  | { kind: 'live' }
  /** The live taps (TapInfo): units of a cluster the lab did not start. */
  | { kind: 'tap'; taps: number }
  | { kind: 'trace'; name: string; duration: number; t: number; complete: boolean; marks: TimelineMark[] }
  /**
   * A topology running elsewhere (a Slurm job), watched through its watch server at `address`.
   * `state`: 'live' while connected; 'lost' since `since` (epoch ms): what is on screen stopped
   * then and is not live (the lab reconnects on its own); 'ended': the job's engine is gone.
   */
  | { kind: 'attached'; address: string; state: 'live' | 'lost' | 'ended'; since: number };

/** A kill, pause, fault or link close on a trace's timeline. */
export interface TimelineMark {
  t: number;
  action: string;
  label: string;
}

/** A trace written by `saveTrace`. `download`: a URL the window may offer (browser mode). */
export interface SavedTrace {
  name: string;
  path: string;
  bytes: number;
  records: number;
  download?: string;
}

/**
 * `recentRecords` also answers `history`: the session's recent round
 * reports, findings and the link counters before each round, oldest first,
 * so a window that (re)connects redraws its charts and findings too.
 */
export const MAX_HISTORY_EVENTS = 1500;

/** One file of the traces folder (`listTraces`). */
export interface TraceFileInfo {
  name: string;
  bytes: number;
  modifiedAt: number;
}

// ---- Reproductions (fault lab, WIRE.md 6) ----

/** One reproduction as the window lists it (`listScenarios`, `scenario --list --json`). */
export interface ScenarioInfo {
  /** 1..11, the order of the list. */
  number: number;
  /** The name `runScenario` and `relay-lab scenario NAME` take, e.g. "mid-frame-desync". */
  name: string;
  title: string;
  /** The incident it reproduces, e.g. "WIRE.md 6.1". */
  incident: string;
  /** What to look at while it runs and in its evidence (a few sentences for the window). */
  narrative: string;
  /** The lab-only historical behaviour the first run uses (WIRE.md 7.5: labelled wherever it appears). */
  historicalBehaviour: string;
}

/** Compact, JSON-safe evidence: numbers, codes, short strings, small lists. */
export type ScenarioEvidence = Record<string, unknown>;

/**
 * ok: the bug reproduced under the historical behaviour and flodl 0.7's
 * behaviour held. not-reproduced / not-held: one side did not behave as the
 * incident says. error: the scenario itself failed to run.
 */
export type ScenarioVerdict = 'ok' | 'not-reproduced' | 'not-held' | 'error';

/** What `runScenario` answers and `relay-lab scenario NAME --json` prints. */
export interface ScenarioResult {
  name: string;
  title: string;
  incident: string;
  narrative: string;
  historicalBehaviour: string;
  historical: { reproduced: boolean; evidence: ScenarioEvidence };
  current: { held: boolean; evidence: ScenarioEvidence };
  verdict: ScenarioVerdict;
  /** Wall time of each run, ms. */
  timings: { historicalMs: number; currentMs: number; totalMs: number };
  /** Every OS process the scenario started, and those still alive at its end (always empty when it ends well). */
  processes: { started: number[]; leftAlive: number[] };
  /** Set when the scenario could not run (verdict error). */
  error?: string;
  /** What the window draws of each run: its trace's units, marks and decisive unit (the window's runs only). */
  pictures?: { historical: RunPicture; current: RunPicture };
}

/**
 * Progress of a running scenario. Not yet a member of LabEvent (the window's
 * event reducer must learn it first): until then the session streams each
 * progress line as a `log` event ("scenario NAME: ...") and the result comes
 * in the runScenario reply.
 */
export interface ScenarioProgress {
  type: 'scenario';
  name: string;
  phase: 'historical' | 'current' | 'done';
  /** One line for the window, e.g. "historical: the naive reader dropped 25 bytes". */
  message: string;
  /** With phase done. */
  result?: ScenarioResult;
}
