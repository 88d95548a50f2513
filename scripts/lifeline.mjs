// The launcher's side of "every process the lab starts dies with its parent"
// (src-main/web/lifeline.ts is the child's side). A child is started
//  - on Linux under `setpriv --pdeathsig TERM`: the kernel sends SIGTERM the
//    moment this process ends, however it ends (exit, crash, SIGKILL);
//  - with a lifeline: an extra pipe whose other end only this process holds,
//    named to the child in RELAY_LAB_LIFELINE. The child exits on its
//    end-of-file, which every OS delivers when this process is gone.
// And this process watches its own launchers (npm, and the `sh -c` npm runs
// it under, which outlive a SIGKILLed npm), so `kill -9` of `npm start`
// ends it, and with it everything below.
import { spawn } from 'node:child_process';
import fs from 'node:fs';

export const LIFELINE_ENV = 'RELAY_LAB_LIFELINE';
const SETPRIV = '/usr/bin/setpriv';
const LIFELINE_FD = 3;

/** Like child_process.spawn, for a child that must not outlive this process. */
export function spawnTied(cmd, args, options = {}) {
  const base = options.stdio ?? 'pipe';
  const stdio = Array.isArray(base) ? [...base] : [base, base, base];
  while (stdio.length < LIFELINE_FD) stdio.push('ignore');
  stdio[LIFELINE_FD] = 'pipe';
  const env = { ...(options.env ?? process.env), [LIFELINE_ENV]: `${LIFELINE_FD}:${process.pid}` };
  const tied = process.platform === 'linux' && fs.existsSync(SETPRIV);
  const child = tied
    ? spawn(SETPRIV, ['--pdeathsig', 'TERM', '--', cmd, ...args], { ...options, stdio, env })
    : spawn(cmd, args, { ...options, stdio, env });
  // This end is only held, never read or written: its closing is the message.
  child.stdio[LIFELINE_FD]?.on('error', () => {});
  return child;
}

/** Linux: `[pid, start time]` and the state of a process, or null when it is gone. */
function procStat(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses).
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: f[0], ppid: Number(f[1]), start: f[19] };
  } catch {
    return null;
  }
}

function procCmdline(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

/**
 * The processes whose end should end this one: the parent, and when npm ran
 * this script, every process up to and including npm itself. Each is known by
 * pid and start time, so a recycled pid does not count as alive.
 */
function launchers() {
  const out = [];
  let pid = process.ppid;
  const underNpm = Boolean(process.env.npm_lifecycle_event);
  for (let depth = 0; depth < 4 && pid > 1; depth++) {
    const st = procStat(pid);
    if (!st) break;
    out.push({ pid, start: st.start });
    if (!underNpm || /(^|[\s/])npm(-cli\.js)?(\s|$)/.test(procCmdline(pid))) break;
    pid = st.ppid;
  }
  return out;
}

/** Calls `onGone` once when a launcher of this process has ended. */
export function watchLaunchers(onGone, pollMs = 250) {
  const ppid = process.ppid;
  const watched = process.platform === 'linux' ? launchers() : [];
  const timer = setInterval(() => {
    const gone =
      process.ppid !== ppid ||
      watched.some((w) => {
        const st = procStat(w.pid);
        return !st || st.start !== w.start || st.state === 'Z';
      });
    if (gone) {
      clearInterval(timer);
      onGone();
    }
  }, pollMs);
  timer.unref();
}
