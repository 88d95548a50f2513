// What the lab says about an external relay (a host's relay run as a command,
// src-main/engine/external-relay.ts): its output lines go to the log, and
// whatever it does that flodl's relay would not (exits early, binds late,
// sends what the controller drops, outlives the session) becomes a finding
// naming the host and the command. Its status ends in the run's report.
import type { Finding } from '@shared/lab/records';
import { hostName } from '@shared/lab/topology';
import type { ExternalRelayEvent } from '../engine/cluster';

/** An external relay's lot, for the run report and reproduction files. */
export interface ExternalRelayStatus {
  host: number;
  command: string;
  /** "running", "exit code 0", "signal SIGKILL", "spawn failed: ...". */
  exit: string;
  /** How it ended when the session stopped: by itself, or the lab had to end it. */
  stopped?: 'exited' | 'terminated' | 'killed';
}

/** A relay that starts listening later than this is named in a finding (flodl's binds at once; a Node relay takes about a second to start on a loaded machine). */
export const LATE_BIND_MS = 5000;

type FindingIn = Omit<Finding, 'id' | 't'>;

export function externalRelayFinding(
  host: number,
  command: string,
  e: ExternalRelayEvent,
  ranks: number[],
): FindingIn | null {
  const who = `relay ${hostName(host)} (command '${command}')`;
  switch (e.type) {
    case 'spawnError':
      return { severity: 'error', kind: 'exit', message: `${who} could not be started: ${e.message}`, ranks };
    case 'exit': {
      const how = e.signal ? `signal ${e.signal}` : `exit code ${e.code}`;
      if (e.during === 'stop') return null;
      // Kill host ended it, with its ranks: the fault's own finding says why; this one that it is gone.
      if (e.during === 'kill')
        return { severity: 'info', kind: 'exit', message: `${who} ended by kill host (${how})`, ranks };
      return {
        severity: e.during === 'start' || e.code !== 0 ? 'error' : 'warn',
        kind: 'exit',
        message:
          `${who} exited ${e.during === 'start' ? 'during start-up' : 'while its ranks were running'} (${how})` +
          (e.said ? `: ${e.said}` : ''),
        ranks,
      };
    }
    case 'listening':
      return e.afterMs >= LATE_BIND_MS
        ? {
            severity: 'warn',
            kind: 'stalled',
            message: `${who} listened on its ${e.channel} loopback port ${Math.round(e.afterMs)} ms after the lab started it (its ranks waited)`,
            ranks,
          }
        : null;
    case 'dropped':
      return {
        severity: 'error',
        kind: 'rejected',
        message: `${who}: the controller dropped its connection: ${e.reason}`,
        ranks,
      };
    case 'stopped':
      return e.how === 'exited'
        ? null
        : {
            severity: 'warn',
            kind: 'stalled',
            message: `${who} hung at shutdown: still running after its ranks and controller were gone; ${e.how === 'terminated' ? 'ended with SIGTERM' : 'killed with SIGKILL'}`,
            ranks,
          };
    default:
      return null;
  }
}
