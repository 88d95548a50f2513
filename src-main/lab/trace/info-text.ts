// The words `relay-lab trace info` puts on a trace's event counts. The raw
// type names read wrong beside the header's figures ("20 links, ..., 122
// links": a link-counter sample is not a link), so each count says what it
// counts, in agreement with its number; the end line is not counted (the
// last line says whether the trace was closed).
import type { TraceEventType } from './format';

const NOUNS: Record<Exclude<TraceEventType, 'end'>, [one: string, many: string]> = {
  record: ['unit', 'units'],
  round: ['round report', 'round reports'],
  finding: ['finding', 'findings'],
  lifecycle: ['lifecycle event (kill, pause, fault, close)', 'lifecycle events (kill, pause, fault, close)'],
  link: ['link declared late', 'links declared late'],
  links: ['link-counter sample', 'link-counter samples'],
  log: ['log line', 'log lines'],
};

export function countWith(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** "1212 units, 10 round reports, 122 link-counter samples", in the order of NOUNS. */
export function eventCountsText(counts: Partial<Record<TraceEventType, number>>): string {
  const parts = (Object.keys(NOUNS) as (keyof typeof NOUNS)[])
    .filter((k) => (counts[k] ?? 0) > 0)
    .map((k) => countWith(counts[k]!, ...NOUNS[k]));
  return parts.length ? parts.join(', ') : 'no events';
}
