// The shape of a command handler: one async function per command type,
// typed by the contract (src-shared/lab/contract.ts), so a handler returns
// exactly its command's reply. A table of them is a mapped type over the
// command types it serves: leaving one out is a compile error.
import type { CommandOf, CommandType, CommandUnion, LabCommandSpecs, ReplyOf } from '@shared/lab/contract';

export type Handler<T extends CommandType, Ctx> = (ctx: Ctx, cmd: CommandOf<T>) => Promise<ReplyOf<T>>;
export type HandlerTable<K extends CommandType, Ctx> = { [T in K]: Handler<T, Ctx> };

/** Commands that start topologies of their own (compare, reproductions): the lab host runs them, never a session. */
const HOST_COMMAND_TYPES = [
  'compareModes',
  'listScenarios',
  'runScenario',
  'reproRecord',
  'draftRepro',
  'saveRepro',
  'runRepro',
] as const;
export type HostCommandType = (typeof HOST_COMMAND_TYPES)[number];
/** Commands about the one topology a session runs. */
export type TopologyCommandType = Exclude<keyof LabCommandSpecs, HostCommandType>;
export type TopologyCommand = CommandUnion<TopologyCommandType>;

export function isTopologyCommand(type: CommandType): type is TopologyCommandType {
  return !(HOST_COMMAND_TYPES as readonly string[]).includes(type);
}

/** Calls the handler of `cmd.type` in `table` (the one cast: TypeScript cannot pair a union's members itself). */
export function dispatch<K extends CommandType, Ctx>(
  table: HandlerTable<K, Ctx>,
  ctx: Ctx,
  cmd: CommandOf<K>,
): Promise<ReplyOf<K>> {
  const handler = table[cmd.type] as unknown as Handler<K, Ctx>;
  return handler(ctx, cmd);
}

/** An error a handler throws to answer `{ ok: false, error: code, message }`. */
export class LabError extends Error {
  override readonly name = 'LabError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
