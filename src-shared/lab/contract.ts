// The one contract between the lab's engine and any front end. Electron IPC
// and browser mode's WebSocket both carry exactly these commands and events;
// the renderer does not know which transport it talks to.
import type { TopologyConfig, UplinkMode } from './topology';
import type { SessionSnapshot, LinkView } from './state';
import type { UnitRecord, Finding, RoundReport } from './records';

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
  | { type: 'snapshot' };

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
  | { ok: true; snapshot?: SessionSnapshot; bytes?: RecordBytes; compare?: CompareRow[] }
  | { ok: false; error: string; message: string };

export type LabEvent =
  | { type: 'snapshot'; snapshot: SessionSnapshot }
  | { type: 'records'; records: UnitRecord[]; droppedBefore: number }
  | { type: 'links'; links: LinkView[] }
  | { type: 'round'; report: RoundReport }
  | { type: 'finding'; finding: Finding }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string };

/** At most one batch per animation frame goes to a front end. */
export interface LabBatch {
  events: LabEvent[];
}

export interface LabApi {
  command(cmd: LabCommand): Promise<LabReply>;
  subscribe(listener: (batch: LabBatch) => void): () => void;
}
