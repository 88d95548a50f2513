// Socket reads straight into the fold kernel's receive arena
// (src-shared/fold/receive-arena.ts): the relay's rank data sockets land
// their bytes where the merge's SIMD sums read them, so a deposit is read
// once, in place, instead of copied into the merge's slots first.
//
// Node reads into a caller's memory through `net.Socket`'s documented
// `onread` option ({ buffer, callback }), but offers it only to sockets it
// constructs for connect(), not to those a server accepts. The accepted
// socket takes the same mode here the way its constructor would have set it
// up: the three fields `onread` fills (found by their symbols' names) and the
// handle's useUserBuffer. Where a runtime lacks any of them this returns
// null and the socket keeps its ordinary 'data' reads (the merge then copies,
// as before); arena-reads.test.ts fails if this runtime's Node stops having
// them, so a Node or Electron upgrade cannot silently lose the fast path.
import type net from 'node:net';
import { ArenaReader, type ReceiveArena } from '@shared/fold/receive-arena';

interface UserBufferHandle {
  useUserBuffer(buf: Uint8Array): void;
}

type ReadSymbols = { buffer: symbol; callback: symbol; generator: symbol };

function readSymbols(socket: net.Socket): ReadSymbols | null {
  const own = Object.getOwnPropertySymbols(socket);
  const find = (name: string) => own.find((s) => s.description === name);
  const [buffer, callback, generator] = [find('kBuffer'), find('kBufferCb'), find('kBufferGen')];
  return buffer && callback && generator ? { buffer, callback, generator } : null;
}

/** True when this runtime's accepted sockets can read into the arena (tests pin it). */
export function arenaReadsSupported(socket: net.Socket): boolean {
  const handle = (socket as unknown as { _handle?: Partial<UserBufferHandle> })._handle;
  return readSymbols(socket) !== null && typeof handle?.useUserBuffer === 'function';
}

/**
 * Switches `socket` to reads into `arena`: every read is handed to `deliver`
 * as a view of an arena block, valid only during the call unless the
 * receiver holds its block (ReceiveArena.retain); a read while every block is
 * lent lands in a fresh ordinary buffer. Returns the function that lets go of
 * the socket's current block (call it once the socket closed), or null when
 * the socket cannot switch (see above; also when bytes already wait in its
 * stream buffer, which would then be delivered after newer ones).
 */
export function readIntoArena(
  socket: net.Socket,
  arena: ReceiveArena,
  deliver: (chunk: Uint8Array) => void,
): (() => void) | null {
  if (!arenaReadsSupported(socket) || socket.readableLength > 0 || socket.destroyed) return null;
  const syms = readSymbols(socket)!;
  const handle = (socket as unknown as { _handle: UserBufferHandle })._handle;
  const reader = new ArenaReader(arena);
  let space = reader.space();
  const fields = socket as unknown as Record<symbol, unknown>;
  fields[syms.buffer] = space;
  // Called after each read with the buffer it filled; the next read lands where generator() says.
  fields[syms.callback] = (nread: number, buf: Uint8Array) => {
    deliver(reader.filled(buf, nread));
    return true; // pauses are the caller's (socket.pause() stops reads in this mode too)
  };
  fields[syms.generator] = () => (space = reader.space());
  handle.useUserBuffer(space);
  return () => reader.close();
}
