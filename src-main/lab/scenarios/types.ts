// What one reproduction is: an incident of WIRE.md 6 run twice, first with
// the historical (lab-only) behaviour, then with flodl 0.7's, each side
// judged automatically and returning compact evidence.
import type { LabBatch, ScenarioEvidence, ScenarioInfo } from '@shared/lab/contract';

export interface ScenarioContext {
  /** Records an OS process the scenario started: the runner checks none is left alive. */
  track(pid: number | undefined): void;
  /** One line of progress for the window and stderr. */
  progress(message: string): void;
  /** Where a scenario's topology streams its events (records, rounds, findings, snapshots), so the window can watch it. */
  observe?: (batch: LabBatch) => void;
  /** Where to record this run's topology as a trace (the window's runs; a socket-level run has none). */
  traceFile?: string;
}

export interface Scenario extends ScenarioInfo {
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
