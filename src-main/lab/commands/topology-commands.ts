// The commands about the one topology a session runs: start and stop it,
// kill, pause and resume ranks, kill hosts, pace its rounds, fault a link,
// fetch a unit's bytes. One handler per command type.
import { bytesToHex } from '@shared/wire/bytes';
import type { TopologySession } from '../topology-session';
import { LabError, type HandlerTable, type TopologyCommandType } from './handler';

export const TOPOLOGY_HANDLERS: HandlerTable<TopologyCommandType, TopologySession> = {
  async start(s, cmd) {
    await s.start(cmd.config ?? {});
    return { ok: true, snapshot: s.snapshot() };
  },
  async stop(s) {
    await s.stop();
    return { ok: true, snapshot: s.snapshot() };
  },
  async snapshot(s) {
    return { ok: true, snapshot: s.snapshot() };
  },
  async killRank(s, cmd) {
    const c = s.requireCluster();
    s.recordFault(`kill rank ${cmd.rank} (SIGKILL)`, [cmd.rank]);
    c.rank(cmd.rank).signal('SIGKILL');
    return { ok: true };
  },
  async pauseRank(s, cmd) {
    const c = s.requireCluster();
    if (c.rank(cmd.rank).signal('SIGSTOP')) s.requireRounds().setState(cmd.rank, 'paused');
    s.recordFault(`pause rank ${cmd.rank} (SIGSTOP)`, [cmd.rank]);
    s.emit({ type: 'snapshot', snapshot: s.snapshot() });
    return { ok: true };
  },
  async resumeRank(s, cmd) {
    const c = s.requireCluster();
    const rounds = s.requireRounds();
    const declaredDead = rounds.rankStates[cmd.rank] === 'dead';
    if (c.rank(cmd.rank).signal('SIGCONT')) rounds.setState(cmd.rank, 'alive');
    s.recordFault(`resume rank ${cmd.rank} (SIGCONT)`, [cmd.rank]);
    if (declaredDead) s.noteResumedAfterDeath(cmd.rank);
    s.emit({ type: 'snapshot', snapshot: s.snapshot() });
    return { ok: true };
  },
  async killHost(s, cmd) {
    const c = s.requireCluster();
    s.recordFault(
      `kill host h${cmd.host}: relay sockets destroyed, ranks killed`,
      c.hostRanks[cmd.host] ?? [],
    );
    c.killHost(cmd.host);
    return { ok: true };
  },
  async pauseRounds(s) {
    s.requireRounds().pause();
    s.emit({ type: 'snapshot', snapshot: s.snapshot() });
    return { ok: true };
  },
  async resumeRounds(s) {
    s.requireRounds().resume();
    s.emit({ type: 'snapshot', snapshot: s.snapshot() });
    return { ok: true };
  },
  async stepRound(s) {
    s.requireRounds().step();
    return { ok: true };
  },
  async setSpeed(s, cmd) {
    if (!Number.isFinite(cmd.roundIntervalMs) || cmd.roundIntervalMs < 0)
      throw new LabError('BAD_ARGUMENT', 'roundIntervalMs must be a finite number >= 0');
    s.setRoundInterval(cmd.roundIntervalMs);
    return { ok: true };
  },
  async getRecordBytes(s, cmd) {
    const got = s.requireCluster(true).tap.bytesOf(cmd.seq);
    if (!got) throw new LabError('NOT_FOUND', `record ${cmd.seq} is no longer held`);
    // Bytes the tap let go are not a short capture: say they are gone (the lab host reads them back from its recording).
    if (got.bytes.length < got.record.captured)
      throw new LabError('NOT_FOUND', `the bytes of record ${cmd.seq} are no longer held by the tap`);
    return {
      ok: true,
      record: got.record,
      bytes: {
        seq: cmd.seq,
        hex: bytesToHex(got.bytes),
        length: got.record.length,
        captured: got.bytes.length,
        saltHex: s.saltHex,
      },
    };
  },
  async setLinkFault(s, cmd) {
    const c = s.requireCluster();
    // A fault on a link whose connection is gone would be listed as holding and do nothing.
    const closed = cmd.fault ? closedLinkReason(s, cmd.link) : null;
    if (closed) throw new LabError('LINK_CLOSED', `${cmd.link}: ${closed}; a fault there would hold nothing`);
    c.setLinkFault(cmd.link, cmd.fault);
    const what = cmd.fault
      ? Object.entries(cmd.fault)
          .filter(([k, v]) => k !== 'dir' && v !== undefined && v !== false)
          .map(([k, v]) => (v === true ? k : `${k}=${v}`))
          .join(' ')
      : 'cleared';
    s.recordFault(`link ${cmd.link}${cmd.fault ? ` (${cmd.fault.dir})` : ''}: ${what}`, []);
    return { ok: true };
  },
};

/** Why a link's connection is gone (its rank dead or exited, its host killed), or null. */
function closedLinkReason(s: TopologySession, linkId: string): string | null {
  const c = s.requireCluster();
  const info = c.tap.getLink(linkId)?.info;
  if (!info) return null;
  if (info.host >= 0 && c.killedHosts.has(info.host)) return `host h${info.host} was killed`;
  if (info.rank === undefined) return null;
  const state = s.snapshot().ranks.find((r) => r.rank === info.rank)?.state;
  return state === 'dead' || state === 'exited' ? `rank ${info.rank} is ${state}` : null;
}
