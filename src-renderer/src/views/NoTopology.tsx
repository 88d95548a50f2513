// What the topology pane says for a trace with no topology: a socket-level
// reproduction drove one connection itself (a writer and a reader, no
// controller, relays or ranks), so there is nothing to draw but its links,
// and the defaults its header carries are not shown as if they were its own.
import type { LinkView } from '@shared/lab/state';

export function NoTopology({ links }: { links: readonly LinkView[] }) {
  return (
    <div aria-label="No topology">
      <p className="muted">
        This trace has no topology: its run drove one connection directly, with no controller, relays or ranks
        behind it. Its units are in Records.
      </p>
      {links.length > 0 && (
        <ul className="mono small" aria-label="Links of the trace">
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
