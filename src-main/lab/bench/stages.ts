// Where a round's time goes, stage by stage, from what the engine already
// reports: the tap's unit times (each unit's end as the tap saw it), the
// relays' 'folded'/'forwarded' events, the controller's 'round' event (with
// its reduce-encode-scatter ms) and each rank's 'adopted' IPC message (with
// the rank's own round ms, so its start is known). Every stage is the
// critical path's share: the latest arrival minus the latest one before it.
//
// The relay receives, verifies (streamed MAC) and folds a deposit in one pass
// over the socket's chunks, so those three show as one measured stage
// (`relayReceiveVerifyFold`). The rank-side "verify" is the time from the
// consensus reaching the rank's link to its 'adopted' message (decode, MAC
// check, the IPC hop; the digest of every element for the lab's verdict
// follows once the round is over for every rank, rank/spec.ts `checked`). Direct mode has no relay:
// its ranks' frames go straight to the controller, so it shows rankEncodeSend,
// controller, consensus, fanOut (the consensus down to every rank) and
// rankVerify only.
import { performance } from 'node:perf_hooks';
import type { UnitRecord } from '@shared/lab/records';
import type { ControllerEvent } from '../../engine/controller';
import type { RelayEvent } from '../../engine/relay';
import type { RankToParent } from '../../rank/spec';
import { ROUND_STAGES, type RoundStage, type StageSummary } from '@shared/lab/round-stages';

interface RoundTimes {
  rankStart: Map<number, number>;
  adopted: Map<number, number>;
  relayDone: Map<number, number>;
  controllerStart?: number;
  controllerDone?: number;
}

/** Collects the engine's events as they happen (performance.now, the tap's clock). */
export class StageRecorder {
  private readonly rounds = new Map<number, RoundTimes>();

  private at(round: number): RoundTimes {
    let r = this.rounds.get(round);
    if (!r) this.rounds.set(round, (r = { rankStart: new Map(), adopted: new Map(), relayDone: new Map() }));
    return r;
  }

  readonly observe = {
    onRankMessage: (rank: number, m: RankToParent): void => {
      if (m.type !== 'adopted') return;
      const now = performance.now();
      const r = this.at(m.round);
      r.adopted.set(rank, now);
      r.rankStart.set(rank, now - m.ms);
    },
    onRelayEvent: (host: number, e: RelayEvent): void => {
      // Fold: the HostFrame is ready; direct: the last rank frame forwarded is the host's latest.
      if (e.type === 'folded' || e.type === 'forwarded')
        this.at(e.round).relayDone.set(host, performance.now());
    },
    onControllerEvent: (e: ControllerEvent): void => {
      if (e.type !== 'round') return;
      const now = performance.now();
      const r = this.at(e.round);
      r.controllerDone = now;
      r.controllerStart = now - e.ms;
    },
  };

  /**
   * Per round, each stage's ms on the critical path; `records` are the tap's
   * units of the run and `tapT0` its clock's origin (performance.now()).
   * Rounds before `fromRound` (the warm-up) are left out.
   */
  breakdown(
    records: readonly UnitRecord[],
    tapT0: number,
    fromRound = 0,
  ): Partial<Record<RoundStage, number>>[] {
    // A rank's own data link: fold hH.rR.data (units carry no round: one frame per round each way,
    // in round order); direct rR.uplink.data straight to the controller (units carry the round).
    const rankUp = new Map<number, number[]>();
    const rankDown = new Map<number, number[]>();
    const seen = new Map<string, number>();
    const hostUp = new Map<string, number>();
    const bcast = new Map<string, number>();
    for (const u of records) {
      const t = tapT0 + u.t;
      if (
        u.layer === 'handshake' ||
        u.layer === 'channelMagic' ||
        (u.kind !== 'RoundFrame' && u.kind !== 'HostFrame' && u.kind !== 'Broadcast')
      )
        continue;
      const rankLink = /^(?:h\d+\.)?r(\d+)\.(?:uplink\.)?data$/.exec(u.link);
      if (rankLink && u.kind === 'RoundFrame') {
        const key = `${u.link}/${u.dir}`;
        const round = u.round ?? seen.get(key) ?? 0;
        seen.set(key, round + 1);
        const m = u.dir === 'up' ? rankUp : rankDown;
        if (!m.has(round)) m.set(round, []);
        m.get(round)!.push(t);
      } else if (/^h\d+\.uplink\.data$/.test(u.link) && u.round !== undefined) {
        const k = `${u.link}/${u.round}`;
        if (u.dir === 'up') hostUp.set(k, Math.max(hostUp.get(k) ?? -Infinity, t));
        else bcast.set(k, Math.max(bcast.get(k) ?? -Infinity, t));
      }
    }
    const latest = (xs: Iterable<number>) => Math.max(...xs);
    const ofRound = (m: Map<string, number>, round: number) =>
      [...m].filter(([k]) => k.endsWith(`/${round}`)).map(([, v]) => v);
    const out: Partial<Record<RoundStage, number>>[] = [];
    for (const [round, r] of [...this.rounds].sort((a, b) => a[0] - b[0])) {
      if (round < fromRound) continue;
      const stage: Partial<Record<RoundStage, number>> = {};
      const set = (s: RoundStage, from: number, to: number) => {
        if (Number.isFinite(from) && Number.isFinite(to)) stage[s] = Math.max(0, to - from);
      };
      const ups = rankUp.get(round) ?? [];
      const downs = rankDown.get(round) ?? [];
      const start = r.rankStart.size ? Math.min(...r.rankStart.values()) : NaN;
      const lastUp = ups.length ? latest(ups) : NaN;
      const relayDone = r.relayDone.size ? latest(r.relayDone.values()) : NaN;
      const up = ofRound(hostUp, round);
      const lastHostUp = up.length ? latest(up) : NaN;
      const bc = ofRound(bcast, round);
      const lastBcast = bc.length ? latest(bc) : NaN;
      const lastDown = downs.length ? latest(downs) : NaN;
      const lastAdopted = r.adopted.size ? latest(r.adopted.values()) : NaN;
      set('rankEncodeSend', start, lastUp);
      set('relayReceiveVerifyFold', lastUp, relayDone);
      set('uplink', relayDone, lastHostUp);
      // Direct mode has no relay: the controller's stage starts at the last rank frame.
      set('controller', Number.isFinite(lastHostUp) ? lastHostUp : lastUp, r.controllerStart ?? NaN);
      set('consensus', r.controllerStart ?? NaN, r.controllerDone ?? NaN);
      set('broadcast', r.controllerDone ?? NaN, lastBcast);
      set('fanOut', Number.isFinite(lastBcast) ? lastBcast : (r.controllerDone ?? NaN), lastDown);
      set('rankVerify', lastDown, lastAdopted);
      out.push(stage);
    }
    return out;
  }
}

/** Each stage's median over the rounds, and its share of the median sum. */
export function summarizeStages(perRound: Partial<Record<RoundStage, number>>[]): StageSummary {
  const medianMs: Partial<Record<RoundStage, number>> = {};
  for (const s of ROUND_STAGES) {
    const xs = perRound.map((r) => r[s]).filter((x): x is number => x !== undefined);
    if (xs.length) medianMs[s] = Math.round(median(xs) * 100) / 100;
  }
  const total = Object.values(medianMs).reduce((a, b) => a + b, 0);
  const share: Partial<Record<RoundStage, number>> = {};
  for (const [s, v] of Object.entries(medianMs))
    share[s as RoundStage] = total > 0 ? Math.round((v / total) * 1000) / 1000 : 0;
  return { medianMs, share, sumOfMediansMs: Math.round(total * 100) / 100 };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
}
