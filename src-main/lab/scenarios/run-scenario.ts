// Runs one reproduction: the historical side, then the current side, then
// checks that every OS process it started is gone (a left-over is killed and
// turns the verdict into an error). Never throws: a side that fails to run is
// reported in its evidence and the verdict is `error`.
import type { LabBatch, ScenarioEvidence, ScenarioResult, ScenarioVerdict } from '@shared/lab/contract';
import { pidAlive } from '../../engine/rank-process';
import type { ControlIndexTable } from '@shared/wire/control-msg-tables';
import type { DecisiveHint, Scenario, ScenarioContext } from './types';
import { decisiveFinding } from './decisive-finding';

const EXIT_GRACE_MS = 3000;

export async function runScenario(
  s: Scenario,
  onProgress: (phase: 'historical' | 'current' | 'done', message: string) => void = () => {},
  observe?: (batch: LabBatch) => void,
  opts: {
    controlIndexTable?: ControlIndexTable;
    traceFile?: (side: 'historical' | 'current') => string;
    decisive?: (side: 'historical' | 'current', hint: DecisiveHint) => void;
  } = {},
): Promise<ScenarioResult> {
  const started: number[] = [];
  const t0 = performance.now();
  const errors: string[] = [];
  const hints: Partial<Record<'historical' | 'current', DecisiveHint>> = {};
  const ctx = (phase: 'historical' | 'current'): ScenarioContext => ({
    track: (pid) => {
      if (pid !== undefined && !started.includes(pid)) started.push(pid);
    },
    progress: (m) => onProgress(phase, m),
    observe,
    controlIndexTable: opts.controlIndexTable,
    traceFile: opts.traceFile?.(phase),
    decisive: (hint) => {
      hints[phase] = hint;
      opts.decisive?.(phase, hint);
    },
  });
  /** The run's trace gets a finding at its decisive unit, so the window's findings lead there. */
  const noteDecisive = async (phase: 'historical' | 'current') => {
    const file = opts.traceFile?.(phase);
    if (!file) return;
    await decisiveFinding(s, phase, file, hints[phase]).catch((e: Error) =>
      errors.push(`${phase}: the decisive unit's finding was not written to the trace: ${e.message}`),
    );
  };

  onProgress('historical', `running the historical behaviour (${s.incident})`);
  let historical: { reproduced: boolean; evidence: ScenarioEvidence };
  try {
    historical = await s.historical(ctx('historical'));
  } catch (e) {
    errors.push(`historical: ${(e as Error).message}`);
    historical = { reproduced: false, evidence: { error: (e as Error).message } };
  }
  await noteDecisive('historical');
  const t1 = performance.now();
  if (!s.judge)
    onProgress(
      'historical',
      historical.reproduced ? 'the incident reproduced' : 'the incident did NOT reproduce',
    );

  onProgress('current', "running flodl 0.7's behaviour");
  let current: { held: boolean; evidence: ScenarioEvidence };
  try {
    current = await s.current(ctx('current'));
  } catch (e) {
    errors.push(`current: ${(e as Error).message}`);
    current = { held: false, evidence: { error: (e as Error).message } };
  }
  await noteDecisive('current');
  const t2 = performance.now();
  if (s.judge && errors.length === 0) {
    const j = s.judge(historical.evidence, current.evidence);
    historical = { reproduced: j.reproduced, evidence: { ...historical.evidence, ...j.historical } };
    current = { held: j.held, evidence: { ...current.evidence, ...j.current } };
    onProgress(
      'historical',
      historical.reproduced
        ? 'the incident reproduced (judged against the current run)'
        : 'the incident did NOT reproduce (judged against the current run)',
    );
  }
  onProgress('current', current.held ? 'the fix held' : 'the fix did NOT hold');

  const leftAlive = await waitGone(started);
  if (leftAlive.length > 0) {
    errors.push(`processes left alive after the scenario: ${leftAlive.join(', ')} (killed)`);
    for (const pid of leftAlive) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  const verdict: ScenarioVerdict =
    errors.length > 0
      ? 'error'
      : !historical.reproduced
        ? 'not-reproduced'
        : !current.held
          ? 'not-held'
          : 'ok';
  const result: ScenarioResult = {
    name: s.name,
    title: s.title,
    incident: s.incident,
    narrative: s.narrative,
    historicalBehaviour: s.historicalBehaviour,
    historical,
    current,
    verdict,
    timings: {
      historicalMs: Math.round(t1 - t0),
      currentMs: Math.round(t2 - t1),
      totalMs: Math.round(performance.now() - t0),
    },
    processes: { started, leftAlive },
  };
  if (errors.length > 0) result.error = errors.join('; ');
  onProgress('done', `verdict ${verdict}`);
  return result;
}

async function waitGone(pids: number[]): Promise<number[]> {
  const until = performance.now() + EXIT_GRACE_MS;
  for (;;) {
    const alive = pids.filter(pidAlive);
    if (alive.length === 0 || performance.now() >= until) return alive;
    await new Promise((r) => setTimeout(r, 50));
  }
}
