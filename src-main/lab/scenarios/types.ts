// What one reproduction is: an incident of WIRE.md 6 run twice, first with
// the historical (lab-only) behaviour, then with flodl 0.7's, each side
// judged automatically and returning compact evidence.
import type { LabBatch, ScenarioEvidence, ScenarioInfo } from '@shared/lab/contract';
import type { ControlIndexTable } from '@shared/wire/control-msg-tables';
import type { FindingKind } from '@shared/lab/records';

export interface ScenarioContext {
  /** Records an OS process the scenario started: the runner checks none is left alive. */
  track(pid: number | undefined): void;
  /** One line of progress for the window and stderr. */
  progress(message: string): void;
  /** Where a scenario's topology streams its events (records, rounds, findings, snapshots), so the window can watch it. */
  observe?: (batch: LabBatch) => void;
  /** The control message index table the scenario's roles speak (default v2; `scenario --index-table`). */
  controlIndexTable?: ControlIndexTable;
  /** Where to record this run as a trace (the window's runs): a topology's, or a socket's (socket-trace.ts). */
  traceFile?: string;
  /** The scenario names its decisive unit (the reader's view, which the wire alone cannot tell). */
  decisive?: (hint: DecisiveHint) => void;
}

/** A unit of the run's trace to look at first, why, and bytes of it to mark (e.g. dropped by a reader). */
export interface DecisiveHint {
  seq: number;
  why: string;
  mark?: { offset: number; length: number; label: string };
}

export interface Scenario extends ScenarioInfo {
  /**
   * The kind of the finding a run's trace gets at its decisive unit (run-scenario.ts):
   * what the incident is (a rejected unit, a MAC that verified what it should not, a
   * stall, a death, a wrong consensus), so the window's findings lead to it.
   */
  findingKind: FindingKind;
  /** Runs the historical behaviour; `reproduced` says whether the incident showed. */
  historical(ctx: ScenarioContext): Promise<{ reproduced: boolean; evidence: ScenarioEvidence }>;
  /** Runs flodl 0.7's behaviour; `held` says whether the fix held. */
  current(ctx: ScenarioContext): Promise<{ held: boolean; evidence: ScenarioEvidence }>;
  /**
   * For incidents judged by comparing the two runs (timings): decides both
   * sides from both evidences, and may add to each side's evidence.
   */
  judge?(
    historical: ScenarioEvidence,
    current: ScenarioEvidence,
  ): { reproduced: boolean; held: boolean; historical?: ScenarioEvidence; current?: ScenarioEvidence };
}
