// What the window draws of one run of a reproduction (a built-in's historical
// or flodl 0.7 side, or a replayed file): a small summary of the run's trace,
// its units sampled onto lanes (one per link) with the decisive unit named,
// and the expectations a file was judged by. Pure data, JSON-safe.
import type { ExpectationResult } from './check';

export interface PictureUnit {
  seq: number;
  /** ms since the run's start. */
  t: number;
  /** Index into RunPicture.lanes. */
  lane: number;
  dir: 'up' | 'down';
  kind: string;
  /** The codec accepted the unit. */
  ok: boolean;
}

/** The unit a person should look at first, and why. */
export interface DecisiveUnit {
  seq: number;
  t: number;
  lane: number;
  /** e.g. "DeclareDead h0 rank 1" */
  label: string;
  /** e.g. "the first record the codec rejected" */
  why: string;
  /** Bytes of the unit to mark in the hex pane (e.g. the bytes a reader dropped). */
  mark?: { offset: number; length: number; label: string };
}

export interface RunPicture {
  /** The run's trace: a file of the traces folder, opened by `openTrace {name}` (absent: the run drives one socket directly and has none). */
  trace?: string;
  durationMs: number;
  /** Link ids, one lane each. */
  lanes: string[];
  /** At most MAX_PICTURE_UNITS, the decisive one always among them. */
  units: PictureUnit[];
  /** Records in the trace (units may be a sample). */
  records: number;
  marks: { t: number; label: string }[];
  rounds: { round: number; t: number; verdict: string }[];
  decisive?: DecisiveUnit;
  /** Why there is no trace, when there is none. */
  note?: string;
}

export const MAX_PICTURE_UNITS = 600;

/** A file replayed in the window (`runRepro`). */
export interface ReproRunView {
  name: string;
  held: boolean;
  verdict: string;
  results: ExpectationResult[];
  rounds: { round: number; verdict: string; consensusSha256?: string; mergeOrder?: number[][] }[];
  dead: number[];
  picture: RunPicture;
  ms: number;
}

/** What Record has captured so far (`reproRecord`, `draftRepro`). */
export interface ReproRecordingState {
  on: boolean;
  /** Actions captured (kill, pause, resume, kill host, link fault set or cleared). */
  actions: number;
  /** Rounds the live session has reported since its start. */
  rounds: number;
  /** Round the live session was on when Record was pressed. */
  fromRound: number;
}
