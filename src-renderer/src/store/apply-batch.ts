// Applies one frame's worth of event batches to the lab's data: the only
// place engine events change what the window shows. Pure apart from the
// record ring (which lives outside React state by design).
import type { LabBatch, LabEvent, LabView } from '@shared/lab/contract';
import type { SessionSnapshot, LinkView } from '@shared/lab/state';
import type { Finding, RoundReport, UnitRecord } from '@shared/lab/records';
import type { RecordRing } from './record-ring';

export const MAX_ROUNDS_KEPT = 300;
export const MAX_FINDINGS_KEPT = 500;
export const MAX_LOGS_KEPT = 200;
/** Link rates are measured over this window of counter samples (bursty traffic reads steadily). */
export const RATE_WINDOW_MS = 2000;

export interface LinkRate {
  up: number;
  down: number;
}

/**
 * One round's uplink bytes per host, next to what `direct` would have sent:
 * K x one rank's upload, K being the ranks whose frames the host actually
 * folded that round (0: the host did not take part; the point is excluded).
 * Data channel only, each unit in the round it belongs to: fold 25 + F
 * against K x (4 + F) (src-shared/sweep/theory.ts).
 */
export interface SavingsPoint {
  round: number;
  uplink: number[];
  direct: number[];
  /** K per host for this round. */
  k: number[];
  /** One folded rank's upload this round (mean over the folded ranks), per host. */
  perRank: number[];
  /**
   * True: the round's own bytes, unit by unit, data channel only (the report's
   * dataUpBytesPerHost). False: estimated from counter samples (both
   * channels), for reports that carry no per-round bytes.
   */
  exact?: boolean;
}

export interface LinkSample {
  t: number;
  totals: Record<string, { up: number; down: number }>;
}

/** A fault, kill or pause (or any finding) placed on the round axis, for bands on the charts. */
export interface RoundMark {
  round: number;
  kind: string;
  severity: 'error' | 'warn' | 'info';
  message: string;
}

export const MAX_MARKS_KEPT = 300;

export interface LogLine {
  t: number;
  level: 'info' | 'warn' | 'error';
  message: string;
}

export interface LabData {
  snapshot: SessionSnapshot | null;
  links: LinkView[];
  linkRates: Record<string, LinkRate>;
  /** Recent counter samples, oldest first, spanning about RATE_WINDOW_MS. */
  linkSamples: LinkSample[];
  rounds: RoundReport[];
  savings: SavingsPoint[];
  /** Bytes each rank had sent up its loopback leg (both channels) at the last round report. */
  rankUpAtLastRound: Record<number, number>;
  findings: Finding[];
  /** Findings placed at the round the cluster was on when they arrived. */
  marks: RoundMark[];
  logs: LogLine[];
  recordsVersion: number;
  /** The live lab, or a saved trace being inspected offline. */
  view: LabView;
}

export const emptyLabData = (): LabData => ({
  snapshot: null,
  links: [],
  linkRates: {},
  linkSamples: [],
  rounds: [],
  savings: [],
  rankUpAtLastRound: {},
  findings: [],
  marks: [],
  logs: [],
  recordsVersion: 0,
  view: { kind: 'live' },
});

const keepLast = <T>(list: T[], max: number): T[] =>
  list.length > max ? list.slice(list.length - max) : list;

export interface ApplyResult {
  data: LabData;
  /** Records added to the ring by this batch, in order. */
  newRecords: UnitRecord[];
  /** True when a new session began and views must rebuild from the (cleared) ring. */
  reset: boolean;
}

export function applyBatches(
  prev: LabData,
  batches: readonly LabBatch[],
  ring: RecordRing,
  now: number,
): ApplyResult {
  let data = prev;
  let newRecords: UnitRecord[] = [];
  let reset = false;
  for (const batch of batches) {
    for (const ev of batch.events) {
      const r = applyEvent(data, ev, ring, now);
      data = r.data;
      if (r.reset) {
        reset = true;
        newRecords = [];
      }
      if (r.records) newRecords = newRecords.concat(r.records);
    }
  }
  if (newRecords.length || reset) data = { ...data, recordsVersion: data.recordsVersion + 1 };
  return { data, newRecords, reset };
}

function applyEvent(
  data: LabData,
  ev: LabEvent,
  ring: RecordRing,
  now: number,
): { data: LabData; records?: UnitRecord[]; reset?: boolean } {
  switch (ev.type) {
    case 'snapshot':
      return applySnapshot(data, ev.snapshot, ring, ev.t ?? now, ev.reset === true, ev.t !== undefined);
    case 'view':
      return { data: { ...data, view: ev.view } };
    case 'records': {
      ring.droppedUpstream += ev.droppedBefore;
      // After a catch-up (recentRecords) a batch may repeat records the ring holds: keep each seq once.
      const last = ring.lastSeq;
      // Records come in seq order: only a batch that starts at or before the ring's newest needs filtering.
      const fresh =
        last === null || ev.records.length === 0 || ev.records[0].seq > last
          ? ev.records
          : ev.records.filter((r) => r.seq > last);
      ring.push(fresh);
      return { data, records: fresh };
    }
    case 'links':
      // A trace's counters carry the trace's clock: rates are measured on it.
      return { data: applyLinks(data, ev.links, ev.t ?? now) };
    case 'round':
      return { data: applyRound(data, ev.report) };
    case 'finding': {
      const f = ev.finding;
      // The round in flight when the finding arrived: after the last report applied (a trace seek
      // replays many rounds in one batch whose snapshot is already at the end), else the snapshot's.
      const lastReport = data.rounds.at(-1);
      const mark: RoundMark = {
        round: lastReport ? lastReport.round + 1 : (data.snapshot?.round ?? 0),
        kind: f.kind,
        severity: f.severity,
        message: f.message,
      };
      return {
        data: {
          ...data,
          findings: keepLast([...data.findings, f], MAX_FINDINGS_KEPT),
          marks: keepLast([...data.marks, mark], MAX_MARKS_KEPT),
        },
      };
    }
    case 'log':
      return {
        data: {
          ...data,
          logs: keepLast([...data.logs, { t: now, level: ev.level, message: ev.message }], MAX_LOGS_KEPT),
        },
      };
    case 'sweep':
      // A sweep's progress belongs to the Explore view's own store (store/explore-store.ts).
      return { data };
  }
}

function applySnapshot(
  data: LabData,
  snapshot: SessionSnapshot,
  ring: RecordRing,
  now: number,
  forceReset = false,
  fromTrace = false,
): { data: LabData; reset?: boolean } {
  const newSession = forceReset || (data.snapshot !== null && data.snapshot.startedAt !== snapshot.startedAt);
  if (newSession) {
    ring.clear();
    const fresh = { ...emptyLabData(), view: data.view };
    // A trace seek replays its counters from the start after this snapshot: the snapshot's
    // (those at the seek time) would be the baseline of the first round and make its savings wrong.
    if (fromTrace) return { data: { ...fresh, recordsVersion: data.recordsVersion, snapshot }, reset: true };
    return {
      data: {
        ...applyLinks({ ...fresh, recordsVersion: data.recordsVersion }, snapshot.links, now),
        snapshot,
      },
      reset: true,
    };
  }
  const withLinks = snapshot.links.length ? applyLinks(data, snapshot.links, now) : data;
  return { data: { ...withLinks, snapshot } };
}

function applyLinks(data: LabData, links: LinkView[], now: number): LabData {
  const totals: LinkSample['totals'] = {};
  for (const l of links) totals[l.id] = { up: l.bytesUp, down: l.bytesDown };
  // Keep one sample older than the window, so the rate always spans it.
  let samples = [...data.linkSamples.filter((s) => s.t < now), { t: now, totals }];
  while (samples.length > 2 && samples[1].t <= now - RATE_WINDOW_MS) samples = samples.slice(1);
  if (samples.length > 256) samples = samples.slice(samples.length - 256);
  const oldest = samples[0];
  const dt = (now - oldest.t) / 1000;
  const rates: Record<string, LinkRate> = {};
  for (const l of links) {
    const before = oldest.totals[l.id];
    rates[l.id] =
      before && dt > 0
        ? { up: Math.max(0, l.bytesUp - before.up) / dt, down: Math.max(0, l.bytesDown - before.down) / dt }
        : { up: 0, down: 0 };
  }
  return { ...data, links, linkRates: rates, linkSamples: samples };
}

/** Bytes each rank has sent up its own loopback legs (data + control): what it would send in `direct`. */
export function rankUploads(links: readonly LinkView[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const l of links) {
    if (l.kind === 'loopback' && l.rank !== undefined) out[l.rank] = (out[l.rank] ?? 0) + l.bytesUp;
  }
  return out;
}

/** A report's savings point from its own unit-by-unit figures (src-shared/lab/round-bytes.ts). */
function exactPoint(report: RoundReport, folded: number[][]): SavingsPoint | null {
  const up = report.dataUpBytesPerHost;
  const ranks = report.rankDataUpBytes;
  if (!up || !ranks) return null;
  const perHost = folded.map((_, h) => ranks[h] ?? []);
  return {
    round: report.round,
    uplink: up.slice(),
    direct: perHost.map((bytes) => bytes.reduce((a, b) => a + b, 0)),
    k: folded.map((f) => f.length),
    perRank: perHost.map((bytes) => (bytes.length ? bytes.reduce((a, b) => a + b, 0) / bytes.length : 0)),
    exact: true,
  };
}

function applyRound(data: LabData, report: RoundReport): LabData {
  const snap = data.snapshot;
  const uploads = rankUploads(data.links);
  let savings = data.savings;
  if (snap) {
    const hosts = snap.hosts;
    // Reports from before foldedPerHost existed (old traces): every rank of the host.
    const folded = hosts.map((h, i) => report.foldedPerHost?.[i] ?? h.ranks);
    const exact = exactPoint(report, folded);
    if (exact) savings = keepLast([...savings, exact], MAX_ROUNDS_KEPT);
    else {
      // A report without per-round bytes (a capture, a trace saved before them): the rank
      // counters' change since the last report, which is only as good as the samples' timing.
      const perRank = folded.map((ranks) => {
        const deltas = ranks
          .map((r) => (uploads[r] ?? 0) - (data.rankUpAtLastRound[r] ?? 0))
          .filter((d) => d > 0);
        return deltas.length ? deltas.reduce((a, b) => a + b, 0) / deltas.length : 0;
      });
      const k = folded.map((ranks) => ranks.length);
      const direct = perRank.map((p, i) => p * k[i]);
      const first = Object.keys(data.rankUpAtLastRound).length === 0;
      // The first report has no baseline for the rank counters; skip it rather than show a wrong ratio.
      if (!first)
        savings = keepLast(
          [
            ...savings,
            {
              round: report.round,
              uplink: report.uplinkBytesPerHost.slice(),
              direct,
              k,
              perRank,
              exact: false,
            },
          ],
          MAX_ROUNDS_KEPT,
        );
    }
  }
  const snapshot = snap
    ? {
        ...snap,
        roundsCompleted: Math.max(snap.roundsCompleted, report.round + 1),
        round: Math.max(snap.round, report.round + 1),
      }
    : snap;
  return {
    ...data,
    snapshot,
    rounds: keepLast([...data.rounds, report], MAX_ROUNDS_KEPT),
    savings,
    rankUpAtLastRound: uploads,
  };
}

export interface HostSavings {
  /** K of the host's latest round it took part in. */
  k: number;
  /** Means over the rounds averaged (the recent rounds the host took part in at that K). */
  uplink: number;
  perRank: number;
  direct: number;
  ratio: number;
  /** Rounds averaged. */
  rounds: number;
  /** Recent rounds the host did not take part in (K = 0): excluded. */
  absent: number;
  /** Recent rounds it took part in at another K (before a death): excluded. */
  otherK: number;
  /** Every round averaged carried its own bytes (SavingsPoint.exact); false: estimated from counters. */
  exact: boolean;
}

/**
 * Per host, over the last `n` rounds: the mean uplink, one rank's upload and
 * direct's K x that, at the K of the host's latest round. Rounds the host did
 * not take part in, and rounds at another K, are excluded and counted, so a
 * host that lost ranks reads its new K and ratio, not an average across both.
 */
export function recentSavings(points: readonly SavingsPoint[], n = 20): (HostSavings | null)[] {
  const recent = points.slice(-n);
  if (recent.length === 0) return [];
  const hosts = Math.max(...recent.map((p) => p.uplink.length));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return Array.from({ length: hosts }, (_, h) => {
    const kOf = (p: SavingsPoint) => p.k?.[h] ?? 0;
    const present = recent.filter((p) => kOf(p) > 0);
    if (present.length === 0) return null;
    const k = kOf(present[present.length - 1]);
    const used = present.filter((p) => kOf(p) === k);
    const withBaseline = used.filter((p) => (p.perRank?.[h] ?? 0) > 0);
    const uplink = mean(used.map((p) => p.uplink[h] ?? 0));
    const perRank = withBaseline.length ? mean(withBaseline.map((p) => p.perRank[h])) : 0;
    const direct = perRank * k;
    return {
      k,
      uplink,
      perRank,
      direct,
      ratio: direct > 0 ? uplink / direct : NaN,
      rounds: used.length,
      absent: recent.length - present.length,
      otherK: present.length - used.length,
      exact: used.every((p) => p.exact === true),
    };
  });
}
