// A tapped socket's reads into one buffer of the tap's own, reused for every
// read, instead of a new 64 KiB buffer per read that the collector frees
// later: forwarding an 8 MiB record through `relay-lab tap` cost its thread
// 5.0-6.7 ms of CPU that way and 2.7-3.7 ms with one reused buffer (Node's
// `onread`, measured by a thread's own CPU time, which a busy machine does
// not distort as it does wall time).
//
// `net.connect` takes `onread` as documented. A server's accepted socket
// does not, so its handle is moved to a new Socket that has it; that leans on
// two internals (`_handle`, and `_server` for the server's count of open
// connections, which its close waits on). Where they are missing the socket
// is kept as accepted and read as before.
import net from 'node:net';

/** Bytes read into the reused buffer; valid only until the callback returns. Return false to pause. */
export type OnBytes = (view: Buffer) => boolean;

const READ_BUFFER_BYTES = 64 * 1024;

export function ownBuffer(onBytes: OnBytes): NonNullable<net.NetConnectOpts['onread']> {
  const buffer = Buffer.allocUnsafeSlow(READ_BUFFER_BYTES);
  return { buffer, callback: (n) => onBytes(buffer.subarray(0, n)) };
}

interface Internals {
  _handle?: unknown;
  _server?: net.Server | null;
  server?: net.Server | null;
}

/**
 * The accepted socket's connection, re-wrapped to read into a buffer of its own (or null: keep
 * `accepted`). `accepted` must come from a server with pauseOnConnect (no read has started).
 */
export function rewrapWithOwnBuffer(
  accepted: net.Socket,
  server: net.Server,
  onBytes: OnBytes,
  options: { allowHalfOpen: boolean },
): net.Socket | null {
  const old = accepted as unknown as Internals;
  if (!old._handle || old._server !== server) return null;
  const handle = old._handle;
  old._handle = null;
  const socket = new net.Socket({
    handle,
    allowHalfOpen: options.allowHalfOpen,
    readable: true,
    writable: true,
    // As the server's pauseOnConnect: no read until the caller resumes it.
    pauseOnCreate: true,
    onread: ownBuffer(onBytes),
  } as net.SocketConstructorOpts & { handle: unknown; pauseOnCreate: boolean });
  // The server counted the accepted socket; the new one carries that count to its close.
  const fresh = socket as unknown as Internals;
  fresh._server = server;
  fresh.server = server;
  old._server = null;
  old.server = null;
  // The abandoned wrapper owns nothing now; it must not be destroyed with a handle it no longer has.
  accepted.removeAllListeners();
  return socket;
}
