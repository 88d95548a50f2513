// The trace commands (docs/trace-format.md): the lab host answers them
// whether the window shows the live session or a saved trace.
import type { TraceCommandSpecs } from '@shared/lab/contract';
import type { LabHost } from '../lab-host';
import type { HandlerTable } from './handler';

export const TRACE_HANDLERS: HandlerTable<keyof TraceCommandSpecs, LabHost> = {
  saveTrace: async (host, cmd) => ({ ok: true, trace: await host.saveTrace(cmd.format) }),
  listTraces: async (host) => ({ ok: true, traces: host.listTraces() }),
  openTrace: (host, cmd) => host.openTrace(cmd.name),
  seekTrace: async (host, cmd) => host.seekTrace(cmd.t),
  stepTrace: async (host, cmd) => host.stepTrace(cmd.by, cmd.dir),
  closeTrace: (host) => host.closeTrace(),
  recentRecords: (host, cmd) => host.catchUp(cmd.limit),
  earlierRecords: async (host, cmd) => ({
    ok: true,
    records: await host.earlierRecords(cmd.before, cmd.limit),
  }),
};
