// Beside "fold 2.05x faster (K=4)": why not 4x, in a line, and a button that reveals that
// topology's stage breakdown, fold's and direct's medians side by side (src-shared/sweep/why-not-k.ts).
import { useState } from 'react';
import type { SweepResult } from '@shared/sweep/types';
import { whyNotK, type WhyNotK } from '@shared/sweep/why-not-k';

const ms = (x: number | null) => (x === null ? '–' : `${x.toFixed(2)} ms`);

export function StageBreakdown({ w }: { w: WhyNotK }) {
  if (w.rows.length === 0)
    return (
      <p className="muted">
        This sweep was saved before the lab measured round stages; run it again to see them.
      </p>
    );
  return (
    <table className="explore-table stage-breakdown" aria-label={`Stage breakdown of ${w.topology}`}>
      <thead>
        <tr>
          <th>stage (median)</th>
          <th>fold</th>
          <th>direct</th>
        </tr>
      </thead>
      <tbody>
        {w.rows.map((r) => (
          <tr key={r.stage}>
            <td className="mono">{r.stage}</td>
            <td className="mono">{ms(r.foldMs)}</td>
            <td className="mono">{ms(r.directMs)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function One({ w, initiallyOpen }: { w: WhyNotK; initiallyOpen: boolean }) {
  const [open, setOpen] = useState(initiallyOpen);
  return (
    <div className="why-not-k">
      <p className="explore-sentence">
        {w.text}{' '}
        <button type="button" className="link" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Hide' : 'Show'} the stage breakdown of {w.topology}
        </button>
      </p>
      {open && <StageBreakdown w={w} />}
    </div>
  );
}

export function ExploreWhyNotK({
  result,
  initiallyOpen = false,
}: {
  result: SweepResult;
  initiallyOpen?: boolean;
}) {
  const items = whyNotK(result);
  if (items.length === 0) return null;
  return (
    <section aria-label="Why not K times faster">
      {items.map((w) => (
        <One key={w.topology} w={w} initiallyOpen={initiallyOpen} />
      ))}
    </section>
  );
}
