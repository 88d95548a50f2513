// A saved trace's link counters at any time, added up from its units' lengths
// (the tap counts the same bytes). The session's own `links` events are
// sparse (about every 100 ms; a short reproduction has none before its first
// round), so the replay places these before each round report: the savings
// view measures a round against the counters at that round, as live.
import type { UnitRecord } from '@shared/lab/records';
import type { LinkView } from '@shared/lab/state';
import type { TraceLink } from './format';

function emptyView(l: TraceLink): LinkView {
  const v: LinkView = {
    id: l.id,
    from: l.from,
    to: l.to,
    channel: l.channel,
    kind: l.kind,
    host: l.host,
    bytesUp: 0,
    bytesDown: 0,
    units: 0,
  };
  if (l.rank !== undefined) v.rank = l.rank;
  return v;
}

export class TraceLinkCounters {
  private readonly views = new Map<string, LinkView>();

  constructor(links: readonly TraceLink[]) {
    for (const l of links) this.declare(l);
  }

  /** A link the header did not list (a `link` event); a reconnect keeps its counts. */
  declare(l: TraceLink): void {
    if (!this.views.has(l.id)) this.views.set(l.id, emptyView(l));
  }

  unit(r: UnitRecord): void {
    const v = this.views.get(r.link);
    if (!v) return;
    if (r.dir === 'up') v.bytesUp += r.length;
    else v.bytesDown += r.length;
    v.units += 1;
  }

  /** The counters now, as copies (the caller may keep them while counting goes on). */
  snapshot(): LinkView[] {
    return [...this.views.values()].map((v) => ({ ...v }));
  }
}
