// The one contract between the lab's engine and any front end. Electron IPC
// and browser mode's WebSocket both carry exactly these commands and events;
// the renderer does not know which transport it talks to.
import type { TopologyConfig, UplinkMode } from './topology';
import type { SessionSnapshot, LinkView } from './state';
import type { UnitRecord, Finding, RoundReport } from './records';
import type { SweepCommand, SweepEvent } from '../sweep/contract';
import type { SweepResult } from '../sweep/types';

export type LabCommand =
  | { type: 'start'; config?: Partial<TopologyConfig> }
  | { type: 'stop' }
  | { type: 'killRank'; rank: number }
  | { type: 'pauseRank'; rank: number }
  | { type: 'resumeRank'; rank: number }
  | { type: 'killHost'; host: number }
  | { type: 'pauseRounds' }
  | { type: 'resumeRounds' }
  | { type: 'stepRound' }
  | { type: 'setSpeed'; roundIntervalMs: number }
  | { type: 'compareModes'; config?: Partial<TopologyConfig>; rounds?: number }
  | { type: 'getRecordBytes'; seq: number }
  | { type: 'setLinkFault'; link: string; fault: LinkFault | null }
  | { type: 'snapshot' }
  | { type: 'listScenarios' }
  | { type: 'runScenario'; name: string };

/**
 * Traces (docs/trace-format.md): save the live session, open a saved one,
 * scrub it, and catch up on records after a (re)connect. The lab host
 * (src-main/lab/lab-host.ts) answers these; the session never sees them.
 */
export type TraceCommand =
  | { type: 'saveTrace'; format: 'ndjson' | 'pcapng' }
  | { type: 'listTraces' }
  | { type: 'openTrace'; name?: string }
  | { type: 'seekTrace'; t: number }
  | { type: 'closeTrace' }
  | { type: 'recentRecords'; limit?: number };

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
  /**
   * Links whose faults name the same key share one bandwidth/latency
   * schedule per direction (one host's NIC) instead of one each.
   */
  shareKey?: string;
  /** Cut the stream into pieces of this many bytes... */
  sliceBytes?: number;
  /** ...with this gap between pieces (readers must reassemble). */
  sliceGapMs?: number;
  /** Outbound only: pause this long between the next record's header and its payload (a mid-frame stall). */
  stallMs?: number;
  /** Flip one bit of the next unit. */
  corruptNext?: boolean;
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
  /** 1/K plus header overhead for fold, 1 for forward (bytes) and direct. */
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

/** What each command answers (`ok: false` carries a named error). */
export type LabReply =
  | {
      ok: true;
      snapshot?: SessionSnapshot;
      bytes?: RecordBytes;
      compare?: CompareRow[];
      scenarios?: ScenarioInfo[];
      scenario?: ScenarioResult;
      trace?: SavedTrace;
      traces?: TraceFileInfo[];
      records?: UnitRecord[];
      view?: LabView;
      history?: LabEvent[];
      /** sweep, openSweep (src-shared/sweep/contract.ts). */
      sweep?: SweepResult;
      /** sweep, saveSweep: the file written. */
      sweepFile?: SavedTrace;
      /** listSweeps. */
      sweeps?: TraceFileInfo[];
    }
  | { ok: false; error: string; message: string };

export type LabEvent =
  /** `reset`: the window drops what it holds first (a trace seek starts with one). */
  | { type: 'snapshot'; snapshot: SessionSnapshot; reset?: boolean }
  | { type: 'view'; view: LabView }
  | { type: 'records'; records: UnitRecord[]; droppedBefore: number }
  | { type: 'links'; links: LinkView[] }
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
  command(cmd: LabCommand | TraceCommand | SweepCommand): Promise<LabReply>;
  subscribe(listener: (batch: LabBatch) => void): () => void;
}

// ---- Traces ----

/** What the window shows: the live lab, or a saved trace at time `t` of `duration` (ms since its start). */
export type LabView =
  | { kind: 'live' }
  | { kind: 'trace'; name: string; duration: number; t: number; complete: boolean; marks: TimelineMark[] };

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
