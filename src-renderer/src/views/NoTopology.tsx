// What the topology pane says for a source with no topology (the taps' view says so in its own words); for a trace: a socket-level
// reproduction drove one connection itself (a writer and a reader, no
// controller, relays or ranks), so there is nothing to draw but its links,
// and the defaults its header carries are not shown as if they were its own.
import type { LinkView } from '@shared/lab/state';

export function NoTopology({ links, tap = false }: { links: readonly LinkView[]; tap?: boolean }) {
  return (
    <div aria-label="No topology">
      {tap ? (
        <p className="muted">
          Taps on a cluster the lab did not start: the lab sees the connections it forwards, not the
          cluster&apos;s controller, relays or ranks, so there is no topology to draw. Their units are in
          Records.
        </p>
      ) : (
        <p className="muted">
          This trace has no topology: its run drove one connection directly, with no controller, relays or
          ranks behind it. Its units are in Records.
        </p>
      )}
      {links.length > 0 && (
        <ul className="mono small" aria-label={tap ? 'Tapped links' : 'Links of the trace'}>
          {links.map((l) => (
            <li key={l.id}>
              {l.id}: {l.from} → {l.to}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
