// The child's side of "dies with its launcher": `npm start` (scripts/start.mjs)
// starts browser mode and the Electron shell with a lifeline, an extra pipe on
// a file descriptor named in RELAY_LAB_LIFELINE ("FD:PARENT_PID"), whose other
// end only the launcher holds. When the launcher ends, however it ends
// (exit, crash, SIGKILL), the kernel closes its end and this side reads
// end-of-file. The parent pid is checked too: a launcher that died before
// this process started its watch left it to another parent already. On Linux
// the launcher also starts the child under a kernel parent-death signal
// (setpriv --pdeathsig), which reaches even a process too busy to read.
import net from 'node:net';

export const LIFELINE_ENV = 'RELAY_LAB_LIFELINE';
const POLL_MS = 500;

/**
 * Calls `onLost` once, when the process that launched this one is gone.
 * Returns false (and watches nothing) when this process was not started with
 * a lifeline. The variable is removed from this process's environment so the
 * processes it starts (ranks, a browser) do not take it for theirs.
 */
export function watchLifeline(onLost: (why: string) => void): boolean {
  const value = process.env[LIFELINE_ENV];
  delete process.env[LIFELINE_ENV];
  const m = value ? /^(\d+):(\d+)$/.exec(value) : null;
  if (!m) return false;
  const fd = Number(m[1]);
  const parent = Number(m[2]);
  let lost = false;
  const lose = (why: string): void => {
    if (lost) return;
    lost = true;
    clearInterval(poll);
    onLost(why);
  };
  const poll = setInterval(() => {
    if (process.ppid !== parent) lose('the launcher is gone (this process has a new parent)');
  }, POLL_MS);
  poll.unref();
  if (process.ppid !== parent) {
    queueMicrotask(() => lose('the launcher was gone before this process started'));
    return true;
  }
  try {
    const pipe = new net.Socket({ fd, readable: true, writable: false });
    pipe.on('data', () => {});
    pipe.once('end', () => lose('the launcher is gone (its lifeline closed)'));
    pipe.once('error', () => lose('the launcher is gone (its lifeline failed)'));
    // The watch must not keep this process alive on its own.
    pipe.unref();
  } catch {
    // No such descriptor (a launcher of another kind): the parent pid poll remains.
  }
  return true;
}
