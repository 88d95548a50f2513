// What went wrong, as the engine found it: HMAC failures, rejected frames,
// dead declarations, stalled barriers naming the ranks they wait for. Each
// finding with a record jumps to it.
import { useState } from 'react';
import { useLab, recordRing } from '../store/lab-store';
import { formatTime } from '../lib/format';
import { FindingMeaning } from './FindingMeaning';
import { revealRecord } from '../store/reveal-record';
import { isResolvedStall, lastCompletedRound } from '../lib/stalls';

/**
 * A finding that names ranks but no record (a dead declaration, a stalled
 * barrier) jumps to the last record of those ranks at or before its time.
 */
export function nearestRecordOf(ranks: readonly number[], t: number): number | null {
  let fallback: number | null = null;
  for (let i = recordRing.size - 1; i >= 0; i--) {
    const r = recordRing.at(i)!;
    if (r.rank === undefined || !ranks.includes(r.rank)) continue;
    if (r.t <= t) return r.seq;
    fallback = r.seq;
  }
  return fallback;
}

/**
 * A record hidden by the filter or by following one rank must still show up (the filter is set aside,
 * not lost). A finding about a round (a stall) pins the ladder to that round: its unit may be of the
 * round before (the last unit its waited-for ranks sent).
 */
export function jumpToRecord(seq: number, round?: number): void {
  revealRecord(seq, { ladderPin: round === undefined ? null : { seq, round } });
}

export function FindingsView() {
  const findings = useLab((s) => s.findings);
  const logs = useLab((s) => s.logs);
  const [tab, setTab] = useState<'findings' | 'log'>('findings');
  const shown = findings.slice(-200).reverse();
  const completed = useLab((s) => lastCompletedRound(s.rounds, s.snapshot));
  return (
    <section aria-label="Findings" className="panel findings">
      <header className="panel-head">
        <h2>Findings</h2>
        <span className="muted small">{findings.length}</span>
        <div className="segmented push-right" role="group" aria-label="Findings or engine log">
          <button type="button" aria-pressed={tab === 'findings'} onClick={() => setTab('findings')}>
            Findings
          </button>
          <button type="button" aria-pressed={tab === 'log'} onClick={() => setTab('log')}>
            Log
          </button>
        </div>
      </header>
      {tab === 'log' ? (
        <ul className="panel-body findings-list" aria-label="Engine log">
          {logs.length === 0 && <li className="muted">No log lines yet.</li>}
          {logs
            .slice()
            .reverse()
            .map((l, i) => (
              <li key={logs.length - i} className={`finding ${l.level}`}>
                <span className={`tag ${l.level === 'info' ? '' : l.level}`}>{l.level}</span>
                <span className="finding-msg mono small">{l.message}</span>
              </li>
            ))}
        </ul>
      ) : (
        <ul className="panel-body findings-list">
          {shown.length === 0 && <li className="muted">Nothing found yet.</li>}
          {shown.map((f) => {
            // A stall whose round completed stays as history, not as a current problem.
            const resolved = isResolvedStall(f, completed);
            return (
              <li
                key={f.id}
                className={`finding ${resolved ? 'resolved' : f.severity}`}
                data-resolved={resolved ? 'true' : undefined}
              >
                <span className="mono muted">{formatTime(f.t)}</span>
                <span className={`tag ${resolved ? '' : f.severity}`}>{f.kind}</span>
                {resolved && (
                  <span className="tag" title="the round completed after this finding">
                    resolved
                  </span>
                )}
                <span className="finding-msg">
                  {f.message}
                  {f.ranks && f.ranks.length > 0 && (
                    <span className="muted"> · ranks {f.ranks.join(', ')}</span>
                  )}
                  <FindingMeaning kind={f.kind} />
                </span>
                {f.recordSeq !== undefined ? (
                  <button
                    type="button"
                    className="link"
                    onClick={() => jumpToRecord(f.recordSeq!, f.round)}
                    aria-label={`Jump to record ${f.recordSeq}`}
                  >
                    #{f.recordSeq}
                  </button>
                ) : f.ranks && f.ranks.length > 0 ? (
                  <button
                    type="button"
                    className="link"
                    title="the last record of these ranks at the time of the finding"
                    aria-label={`Jump to a record of rank ${f.ranks.join(', ')}`}
                    onClick={() => {
                      const seq = nearestRecordOf(f.ranks!, f.t);
                      if (seq !== null) jumpToRecord(seq, f.round);
                    }}
                  >
                    records
                  </button>
                ) : null}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
