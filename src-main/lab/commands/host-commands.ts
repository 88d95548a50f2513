// Commands that start topologies of their own: compareModes (the same
// workload in fold, forward and direct) and the reproductions. The lab host
// runs them; a topology session never does (it runs one topology only).
// The reproductions' handlers are in ./repro-commands.ts.
import type { LabBatch } from '@shared/lab/contract';
import type { TopologyConfig } from '@shared/lab/topology';
import { compareModes } from '../compare';
import { scenarioInfos } from '../scenarios/registry';
import { type HandlerTable, type HostCommandType } from './handler';
import { REPRO_HANDLERS, type ReproHostContext } from './repro-commands';

/** What these handlers need of the lab host (src-main/lab/lab-host.ts). */
export interface HostContext extends ReproHostContext {
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
  ...REPRO_HANDLERS,
};
