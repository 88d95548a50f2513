// Messages on browser mode's WebSocket. The client sends commands with an id;
// the server answers each with a reply of the same id and pushes event
// batches (at most one per frame interval).
import type { LabBatch, LabReply } from '@shared/lab/contract';

export interface ClientCommandMessage {
  id: number;
  command: unknown;
}

export type ServerMessage =
  | { type: 'reply'; id: number; reply: LabReply }
  | { type: 'batch'; batch: LabBatch }
  /** A message that could not be read as a command (no id to answer with). */
  | { type: 'error'; error: 'BAD_MESSAGE'; message: string };

/** Largest message a client may send: commands are small. */
export const MAX_CLIENT_MESSAGE = 64 * 1024;
/** Hold batches while this much is still queued on the socket. */
export const MAX_SOCKET_BACKLOG = 8 * 1024 * 1024;
/** Commands one client may have running at once; more are answered BUSY. */
export const MAX_PENDING_COMMANDS = 64;
