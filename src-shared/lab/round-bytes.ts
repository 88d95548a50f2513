// Which round each data-channel byte belongs to, unit by unit (issue 30 #3).
// Counter deltas between two instants (a round's start and end, or two
// `links` samples 100 ms apart) put a 50 ms round's bytes into the wrong
// round or into none, and read heartbeats as round traffic. Here every unit
// that goes up a data link carries the round it was sent for (the tap tags
// it: a relay's RoundFrame with the rank's frame count, the controller's
// HostFrame, RankExit and direct RoundFrame with the round it is reducing),
// so a round's bytes are the sum of its units' lengths, and the rounds plus
// the connection setup add up to the link counters exactly.
import type { UnitRecord } from './records';
import type { Channel } from './state';

/** What the ledger needs of a link (a LinkView or a trace's link). */
export interface LedgerLink {
  kind: 'loopback' | 'uplink';
  channel: Channel;
  host: number;
  rank?: number;
}

/** One round's data bytes going up. */
export interface RoundBytes {
  /** Per host: bytes up its data uplink(s) to the controller (direct mode: its ranks' own uplinks). */
  hostUp: number[];
  /** Per rank: its own len-framed RoundFrame(s) of the round, on its leg to the relay (direct: its uplink). */
  rankUp: Map<number, number>;
}

interface Tally {
  hostUp: Map<number, number>;
  rankUp: Map<number, number>;
}

const add = (m: Map<number, number>, k: number, n: number) => m.set(k, (m.get(k) ?? 0) + n);

export class RoundByteLedger {
  private readonly rounds = new Map<number, Tally>();
  /** Per host: data-uplink bytes that belong to no round (channel magic, Hello): the connection's setup. */
  readonly setupUp = new Map<number, number>();
  /** Rounds below this were taken: a unit for one of them arriving late is counted in `late`. */
  private takenBelow = 0;
  /** Per host: data-uplink bytes of rounds already taken (none expected: see unit()). */
  readonly lateUp = new Map<number, number>();

  /**
   * Counts one unit. Only bytes going up a data link are round traffic; the
   * control channel (heartbeats, metrics) is paced by time, not by rounds.
   */
  unit(r: UnitRecord, link: LedgerLink | undefined): void {
    if (!link || link.channel !== 'data' || r.dir !== 'up' || r.length <= 0) return;
    if (link.kind === 'uplink') {
      if (link.host < 0) return;
      if (r.round === undefined) add(this.setupUp, link.host, r.length);
      else if (r.round < this.takenBelow) add(this.lateUp, link.host, r.length);
      else add(this.tally(r.round).hostUp, link.host, r.length);
      // Direct mode: a rank's own uplink carries its RoundFrame, what one rank sends.
      if (
        link.rank !== undefined &&
        r.round !== undefined &&
        r.round >= this.takenBelow &&
        r.kind === 'RoundFrame'
      )
        add(this.tally(r.round).rankUp, link.rank, r.length);
      return;
    }
    // A rank's leg to its relay: its RoundFrame for the round (the relay tags it with the rank's frame count).
    if (link.rank === undefined || r.round === undefined || r.round < this.takenBelow) return;
    if (r.kind !== 'RoundFrame') return;
    add(this.tally(r.round).rankUp, link.rank, r.length);
  }

  private tally(round: number): Tally {
    let t = this.rounds.get(round);
    if (!t) this.rounds.set(round, (t = { hostUp: new Map(), rankUp: new Map() }));
    return t;
  }

  /** The bytes counted so far for `round`, without forgetting them. */
  peek(round: number, hosts: number): RoundBytes {
    const t = this.rounds.get(round);
    return {
      hostUp: Array.from({ length: hosts }, (_, h) => t?.hostUp.get(h) ?? 0),
      rankUp: new Map(t?.rankUp ?? []),
    };
  }

  /**
   * The bytes of `round`, and the ledger forgets it and every round before
   * it (a session may run for hours). Call once the round is over: every
   * unit the round's consensus was made of has been recorded by then.
   */
  take(round: number, hosts: number): RoundBytes {
    const out = this.peek(round, hosts);
    for (const k of [...this.rounds.keys()]) if (k <= round) this.rounds.delete(k);
    this.takenBelow = Math.max(this.takenBelow, round + 1);
    return out;
  }
}
