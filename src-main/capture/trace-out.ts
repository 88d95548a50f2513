// Writes what a tap or an import decoded as a relay-lab trace
// (docs/trace-format.md): a `link` event before a link's first record (again
// when a reconnect brings new endpoints), one `record` per unit, `linkClosed`
// when a connection ends, and a `log` line naming every gap.
import type { RoundReport } from '@shared/lab/records';
import type { TopologyConfig } from '@shared/lab/topology';
import { DEFAULT_TOPOLOGY } from '@shared/lab/topology';
import { saltToHex } from '@shared/wire/salt';
import type { TraceLink } from '../lab/trace/format';
import { makeTraceHeader, type TraceWriter } from '../lab/trace/ndjson';
import { unitRecordOf } from './link-naming';
import type { DecodedUnit } from './stream-decoder';

export interface CaptureTraceOptions {
  salt: Uint8Array;
  startedAt: number;
  producer: string;
  snapLen: number;
  /** What is known of the cluster (hosts and their rank counts from the Hellos). */
  config?: Partial<TopologyConfig>;
  links?: TraceLink[];
}

export function captureTraceHeader(o: CaptureTraceOptions) {
  return makeTraceHeader({
    startedAt: o.startedAt,
    saltHex: saltToHex(o.salt),
    // Only the topology is known from outside; the rest are the lab defaults, marked by rounds = 0.
    config: { ...DEFAULT_TOPOLOGY, ranksPerHost: [], rounds: 0, ...o.config },
    links: o.links ?? [],
    producer: o.producer,
    snapLen: o.snapLen,
  });
}

export class CaptureTraceWriter {
  private seq = 0;
  private readonly announced = new Map<string, string>();

  constructor(readonly writer: TraceWriter) {
    for (const l of writer.header.links) this.announced.set(l.id, endpointKey(l));
  }

  /** One unit; `round`: the capture's round it belongs to, where one is known (capture-rounds.ts). */
  unit(link: TraceLink, u: DecodedUnit, round?: number): void {
    const key = endpointKey(link);
    if (this.announced.get(link.id) !== key) {
      this.announced.set(link.id, key);
      this.writer.write({ type: 'link', t: u.t, link });
    }
    const record = unitRecordOf(this.seq++, link, u);
    if (round !== undefined) record.round = round;
    this.writer.write({ type: 'record', t: u.t, record, bytes: u.bytes });
    if (u.verdict === 'gap')
      this.writer.write({ type: 'log', t: u.t, level: 'warn', message: `${link.id} ${u.dir}: ${u.summary}` });
  }

  closed(link: TraceLink | null, by: 'client' | 'server', reset: boolean, t: number): void {
    if (!link || !this.announced.has(link.id)) return;
    this.writer.write({ type: 'lifecycle', t, action: 'linkClosed', link: link.id, by, reset });
  }

  /** A round the capture holds whole. */
  round(report: RoundReport, t: number): void {
    this.writer.write({ type: 'round', t, report });
  }

  log(level: 'info' | 'warn' | 'error', message: string, t: number): void {
    this.writer.write({ type: 'log', t, level, message });
  }

  close(): Promise<void> {
    return this.writer.close();
  }
}

function endpointKey(l: TraceLink): string {
  return `${l.clientAddr}:${l.clientPort}>${l.serverAddr}:${l.serverPort}`;
}
