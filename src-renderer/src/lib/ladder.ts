// Builds a sequence diagram of recent rounds from the records: lanes for the
// ranks, the relays and the controller; one arrow per record, in order.
import type { UnitRecord } from '@shared/lab/records';
import type { SessionSnapshot } from '@shared/lab/state';

export interface LadderArrow {
  seq: number;
  from: number;
  to: number;
  kind: string;
  round?: number;
  bad: boolean;
}

export interface Ladder {
  lanes: string[];
  arrows: LadderArrow[];
}

/** Lane names: r0..rN, then each host's relay (h0..), then the controller (ctl). */
export function ladderLanes(snapshot: SessionSnapshot): string[] {
  return [...snapshot.ranks.map((r) => `r${r.rank}`), ...snapshot.hosts.map((h) => h.name), 'ctl'];
}

/**
 * Where a record goes: link ids are `h0.r3.data` (rank <-> relay),
 * `h0.uplink.data` (relay <-> controller) and `r3.uplink.data` (direct mode).
 */
export function endpointsOf(
  rec: UnitRecord,
  snapshot: SessionSnapshot,
): { lower: number; upper: number } | null {
  const ranks = snapshot.ranks.length;
  const controller = ranks + snapshot.hosts.length;
  const parts = rec.link.split('.');
  const rankLane = (name: string) => {
    const n = Number(name.slice(1));
    const i = snapshot.ranks.findIndex((r) => r.rank === n);
    return i >= 0 ? i : null;
  };
  const hostLane = (name: string) => {
    const n = Number(name.slice(1));
    const i = snapshot.hosts.findIndex((h) => h.host === n);
    return i >= 0 ? ranks + i : null;
  };
  if (parts.length >= 2 && /^h\d+$/.test(parts[0]) && /^r\d+$/.test(parts[1])) {
    const r = rankLane(parts[1]);
    const h = hostLane(parts[0]);
    return r === null || h === null ? null : { lower: r, upper: h };
  }
  if (parts.length >= 2 && parts[1] === 'uplink') {
    const lower = /^h\d+$/.test(parts[0])
      ? hostLane(parts[0])
      : /^r\d+$/.test(parts[0])
        ? rankLane(parts[0])
        : null;
    return lower === null ? null : { lower, upper: controller };
  }
  return null;
}

/**
 * Arrows for the records of `rounds` rounds ending at `lastRound` (default: the newest round in
 * `records`); records without a round are kept when they fall between.
 */
export function buildLadder(
  records: readonly UnitRecord[],
  snapshot: SessionSnapshot,
  rounds = 2,
  maxArrows = 400,
  lastRound?: number,
): Ladder {
  const lanes = ladderLanes(snapshot);
  let maxRound = -1;
  for (const r of records) if (r.round !== undefined && r.round > maxRound) maxRound = r.round;
  const upTo = lastRound ?? maxRound;
  const firstRound = upTo - rounds + 1;
  // Start at the first record of the first round shown.
  let start = records.findIndex((r) => r.round !== undefined && r.round >= firstRound);
  if (start < 0) start = Math.max(0, records.length - maxArrows);
  const arrows: LadderArrow[] = [];
  for (let i = start; i < records.length && arrows.length < maxArrows; i++) {
    const r = records[i];
    // The rounds after the one in focus are not this ladder's (the rounds interleave little: a
    // round's records end before the next round's SyncNow).
    if (r.round !== undefined && r.round > upTo) break;
    const ends = endpointsOf(r, snapshot);
    if (!ends) continue;
    const [from, to] = r.dir === 'up' ? [ends.lower, ends.upper] : [ends.upper, ends.lower];
    arrows.push({ seq: r.seq, from, to, kind: r.kind, round: r.round, bad: r.verdict !== 'ok' });
  }
  return { lanes, arrows };
}

/**
 * The arrows a ladder draws: those within the scrolled-to part of its body,
 * `overscan` more each side. A round's ladder holds up to 150 arrows and its
 * pane shows about 16; every arrow drawn is SVG text laid out again on each
 * redraw, so drawing them all made the ladder the costliest of the read-out
 * views.
 */
export function arrowWindow(
  scrollTop: number,
  viewport: number,
  count: number,
  top: number,
  rowHeight: number,
  overscan: number,
): { first: number; end: number } {
  const first = Math.max(0, Math.floor((scrollTop - top) / rowHeight) - overscan);
  const end = Math.min(count, Math.ceil((scrollTop + viewport - top) / rowHeight) + overscan);
  return { first: Math.min(first, count), end: Math.max(end, Math.min(first, count)) };
}

/** The round a unit belongs to: its own, or (a unit without one) that of the unit before it. Null: not in `records`. */
export function roundOfSeq(records: readonly UnitRecord[], seq: number): number | null {
  const i = records.findIndex((r) => r.seq === seq);
  if (i < 0) return null;
  for (let j = i; j >= 0; j--) if (records[j].round !== undefined) return records[j].round!;
  return null;
}

export interface LadderFocus {
  round: number;
  /**
   * Why this round: the finding's (a finding about a round selected its unit), the selected unit's
   * (a list click, a tour step), the stalled one, or the latest complete.
   */
  why: 'finding' | 'selected' | 'stalled' | 'latest';
}

/**
 * The round the ladder draws. It follows what the person is looking at: the selected unit's round
 * (a finding or a tour step selects its unit), else the round the cluster is stuck in (a finding
 * about round 384 points at the ladder; the latest complete round is 383), else the latest complete one.
 */
export function ladderFocus(o: {
  selectedRound: number | null;
  /**
   * The round of the finding whose unit is selected: a stall of round 316 jumps to its ranks' last
   * unit, of round 315, and the finding is about 316 (its text points at the ladder).
   */
  findingRound?: number | null;
  stalledRound: number | null;
  lastCompleted: number;
}): LadderFocus | null {
  if (o.findingRound !== undefined && o.findingRound !== null)
    return { round: o.findingRound, why: 'finding' };
  if (o.selectedRound !== null) return { round: o.selectedRound, why: 'selected' };
  if (o.stalledRound !== null) return { round: o.stalledRound, why: 'stalled' };
  return o.lastCompleted >= 0 ? { round: o.lastCompleted, why: 'latest' } : null;
}

/** Lane width: as wide as readable (46 px) while every lane fits the pane, never under 34 px (then the body scrolls sideways). */
export function laneWidth(bodyPx: number, lanes: number): number {
  return Math.max(34, Math.min(46, Math.floor((bodyPx - 20) / Math.max(1, lanes))));
}
