// Commands that start topologies of their own: compareModes (the same
// workload in fold, forward and direct) and the reproductions. The lab host
// runs them; a topology session never does (it runs one topology only).
import type { LabBatch, ScenarioResult } from '@shared/lab/contract';
import type { TopologyConfig } from '@shared/lab/topology';
import { compareModes } from '../compare';
import { findScenario, scenarioInfos } from '../scenarios/registry';
import { runScenario } from '../scenarios/run-scenario';
import { LabError, type HandlerTable, type HostCommandType } from './handler';

/** What these handlers need of the lab host (src-main/lab/lab-host.ts). */
export interface HostContext {
  /** The live session's config (compare runs the same workload). */
  liveConfig(): TopologyConfig;
  /** Ends the live recording and history (a reproduction replaces the topology). */
  stopLive(): Promise<void>;
  stopSession(): Promise<void>;
  /** Runs `work` while topology commands wait. */
  runExclusive<T>(work: () => Promise<T>): Promise<T>;
  /** Shows a batch of events as live (a reproduction's own topologies). */
  emitLive(batch: LabBatch): void;
}

export const HOST_HANDLERS: HandlerTable<HostCommandType, HostContext> = {
  async compareModes(host, cmd) {
    const compare = await compareModes({ ...host.liveConfig(), ...(cmd.config ?? {}) }, cmd.rounds ?? 3);
    return { ok: true, compare };
  },
  async listScenarios() {
    return { ok: true, scenarios: scenarioInfos() };
  },
  async runScenario(host, cmd) {
    const s = findScenario(cmd.name);
    if (!s)
      throw new LabError(
        'NOT_FOUND',
        `no scenario '${cmd.name}' (known: ${scenarioInfos()
          .map((x) => x.name)
          .join(', ')})`,
      );
    const log = (level: 'info' | 'error', message: string) =>
      host.emitLive({ events: [{ type: 'log', level, message }] });
    const result: ScenarioResult = await host.runExclusive(async () => {
      // A reproduction starts its own sockets, processes and topologies: the live topology stops first.
      await host.stopLive();
      await host.stopSession();
      // The scenario's own topologies stream their events to the window, so it watches them run.
      return runScenario(
        s,
        (phase, message) => log('info', `scenario ${s.name} [${phase}]: ${message}`),
        (batch) => host.emitLive(batch),
      );
    });
    log(
      result.verdict === 'ok' ? 'info' : 'error',
      `scenario ${s.name}: verdict ${result.verdict}${result.error ? ` (${result.error})` : ''}`,
    );
    return { ok: true, scenario: result };
  },
};
