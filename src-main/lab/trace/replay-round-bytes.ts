// A saved trace's round reports with their per-round data bytes: a trace
// written before reports carried them (RoundReport.dataUpBytesPerHost) still
// holds every unit with its round, so the replay counts them as the engine
// now does (src-shared/lab/round-bytes.ts) instead of leaving the savings to
// counter samples. A round whose units the trace does not all hold (it began
// recording mid-round) keeps no figure rather than a wrong one.
import type { RoundReport, UnitRecord } from '@shared/lab/records';
import { RoundByteLedger, type LedgerLink } from '@shared/lab/round-bytes';
import type { TraceLink } from './format';

export class TraceRoundBytes {
  private readonly ledger = new RoundByteLedger();
  private readonly links = new Map<string, LedgerLink>();

  constructor(
    links: readonly TraceLink[],
    private readonly hostRanks: readonly (readonly number[])[],
  ) {
    for (const l of links) this.declare(l);
  }

  declare(l: TraceLink): void {
    if (!this.links.has(l.id)) this.links.set(l.id, l);
  }

  unit(r: UnitRecord): void {
    this.ledger.unit(r, this.links.get(r.link));
  }

  /** The report as written when it carries its bytes; else with the bytes its units add up to, when they are all here. */
  complete(report: RoundReport): RoundReport {
    const hosts = this.hostRanks.length;
    const bytes = this.ledger.take(report.round, hosts);
    if (report.dataUpBytesPerHost && report.rankDataUpBytes) return report;
    const folded = this.hostRanks.map((ranks, h) => report.foldedPerHost?.[h] ?? [...ranks]);
    const rankUp = folded.map((ranks) => ranks.map((x) => bytes.rankUp.get(x) ?? 0));
    const whole = folded.every(
      (ranks, h) => ranks.length === 0 || (bytes.hostUp[h] > 0 && rankUp[h].every((n) => n > 0)),
    );
    return whole ? { ...report, dataUpBytesPerHost: bytes.hostUp, rankDataUpBytes: rankUp } : report;
  }
}
