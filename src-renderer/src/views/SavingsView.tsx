// What the relay saves: per host, the data bytes its uplink carried for each
// round (each unit counted in its own round, src-shared/lab/round-bytes.ts)
// against K x what one rank sends (what `direct` would put on the uplink),
// with the wire format's exact figure next to it (the sweep's theory); and
// Compare modes, which runs the same workload in fold, forward and direct.
import { useEffect, useState } from 'react';
import { useLab, runCompare, workloadKey } from '../store/lab-store';
import { useThrottled } from '../lib/use-throttled';
import { READOUT_MS } from '../lib/use-sampled';
import { useUi } from '../store/ui-store';
import { recentSavings, type HostSavings } from '../store/apply-batch';
import type { UplinkMode } from '@shared/lab/topology';
import { formatBytes, formatRatio, plural } from '../lib/format';
import { frameBytesOf, sizeNote, sizeWords, theoryFormula, theoryRatio } from '../lib/savings-theory';
import { SavingsChart } from './SavingsChart';
import { hasTopology } from '@shared/lab/topology';
import type { LabView } from '@shared/lab/contract';
import type { TopologyConfig } from '@shared/lab/topology';

/**
 * Why this source has no savings to show, or null when it has. A socket-level reproduction's trace
 * drove one connection (no relay folds anything); taps watch a cluster the lab did not start, whose
 * model size and per-round bytes the window does not have (its config is the lab's defaults): a
 * table of K, F and ratios there would be the defaults', not the cluster's.
 */
export function savingsUnmeasured(cfg: TopologyConfig | undefined, view: LabView['kind']): string | null {
  if (!cfg) return null;
  if (!hasTopology(cfg))
    return 'No topology: this run drove one connection directly, with no relay folding ranks into rounds, so there are no uplink savings to measure.';
  if (view === 'tap')
    return "Taps: a cluster the lab did not start. Its model size and each round's uplink bytes are not measured here; the bytes each tap carried are in Manage taps.";
  return null;
}

/** What the table means in each mode, in one sentence. */
export function modeMeaning(mode: UplinkMode | undefined): string {
  if (mode === 'forward')
    return "forward (lab-only): the relay sends each rank's frame up unfolded, one mux record each: K × (25 + F) where direct sends K × (4 + F), so the ratio is a little above 1; nothing is saved.";
  if (mode === 'direct')
    return 'direct (lab-only): no relay; each rank sends its own length-prefixed frame (4 + F) to the controller. This is the baseline: ratio 1 by definition.';
  return 'fold: the relay folds the frames of its K live ranks into one HostFrame (25 + F); direct would send K × (4 + F). K counts the ranks folded in the round.';
}

/** Why the ratios are what they are: the frame's size and the bytes each frame carries around it. */
export function headerWords(mode: UplinkMode | undefined): string {
  const base =
    'Per frame on the wire: 25 + F up a relay’s uplink (the mux record’s 25-byte header), 4 + F from a rank (its 4-byte length prefix). ';
  if (mode === 'forward')
    return base + 'Forward sends K records of 25 + F: (25 + F) / (4 + F), above 1 by 21 bytes a frame.';
  if (mode === 'direct') return base + 'Direct sends exactly what it is measured against: 1.';
  return (
    base +
    'Fold: (25 + F) / (K × (4 + F)), never below 1/K; for K = 1 above 1 (one frame with the larger header: 21 bytes more than direct).'
  );
}

/** The ratio as arithmetic on the live numbers. */
export function formula(row: HostSavings): string {
  return (
    `ratio = uplink / (K × one rank) = ${formatBytes(row.uplink)} / (${row.k} × ${formatBytes(row.perRank)}) = ` +
    `${Number.isFinite(row.ratio) ? formatRatio(row.ratio) : '–'} (mean of ${row.rounds} round${row.rounds === 1 ? '' : 's'})`
  );
}

/** One figure when every host shows the same, else one per host. */
function perHost(values: number[], format: (v: number) => string): string {
  const shown = values.map(format);
  return shown.every((v) => v === shown[0]) ? (shown[0] ?? '–') : shown.join(' / ');
}

export function SavingsView() {
  const snapshot = useLab((s) => s.snapshot);
  const savings = useThrottled(
    useLab((s) => s.savings),
    READOUT_MS,
  );
  const labCompare = useLab((s) => s.compare);
  // A comparison belongs to the workload it ran: under another topology it is not shown (issue 10).
  const compare =
    labCompare.workload === undefined || !snapshot || labCompare.workload === workloadKey(snapshot.config)
      ? labCompare
      : { ...labCompare, rows: null, error: null };
  const marks = useLab((s) => s.marks);
  const theme = useUi((s) => s.theme);
  const hosts = snapshot?.hosts ?? [];
  const mode = snapshot?.config.mode;
  const recent = recentSavings(savings);
  const cfg = snapshot?.config;
  const frame = cfg ? frameBytesOf(cfg) : 0;
  const estimated = recent.some((r) => r && !r.exact);
  const roundsDone = useLab((s) => s.rounds.length);
  const unmeasured = savingsUnmeasured(
    cfg,
    useLab((s) => s.view.kind),
  );
  // The chart and the compare table share the space; a finished comparison comes to the front.
  const [show, setShow] = useState<'chart' | 'compare'>('chart');
  useEffect(() => {
    if (compare.rows || compare.error) setShow('compare');
  }, [compare.rows, compare.error]);

  return (
    <section aria-label="Byte savings" className="panel savings">
      <header className="panel-head">
        <h2>Byte savings</h2>
        <span className="muted small">
          {unmeasured
            ? 'nothing to measure here'
            : savings.length
              ? `mean of the last ${savings.length === 1 ? 'round' : plural(Math.min(20, savings.length), 'round')}`
              : roundsDone > 0
                ? 'these rounds carry no per-round bytes'
                : 'no round measured yet'}
        </span>
        <button
          type="button"
          className="push-right"
          disabled={compare.busy || !snapshot || unmeasured !== null}
          onClick={() => {
            // The same workload as the running topology, in every mode.
            const c = snapshot?.config;
            void runCompare({
              type: 'compareModes',
              config: c
                ? { ranksPerHost: c.ranksPerHost, modelBytes: c.modelBytes, dtype: c.dtype }
                : undefined,
              rounds: 3,
            });
          }}
        >
          {compare.busy ? 'Comparing…' : 'Compare modes'}
        </button>
      </header>
      {unmeasured ? (
        <div className="panel-body savings-body">
          <p className="muted small savings-meaning" aria-label="What the table means">
            {unmeasured}
          </p>
        </div>
      ) : (
        <div className="panel-body savings-body">
          <p className="muted small savings-meaning" aria-label="What the table means">
            {modeMeaning(mode)}
          </p>
          <table className="figures" aria-label="Savings per host">
            <thead>
              <tr>
                <th>host</th>
                <th title="ranks whose frames the host folded in its latest round">K</th>
                <th className="num">uplink/round</th>
                <th className="num">direct (K ×)</th>
                <th className="num">ratio</th>
                <th className="num" title="the wire format's figure for this K and F (the sweep's theory)">
                  theory
                </th>
              </tr>
            </thead>
            <tbody>
              {hosts.map((h) => {
                const row = recent[h.host] ?? null;
                const k = row?.k ?? 0;
                const ratio = row ? row.ratio : NaN;
                const theory = mode && k > 0 ? theoryRatio(mode, k, frame) : NaN;
                return (
                  <tr
                    key={h.host}
                    aria-label={`savings ${h.name}`}
                    data-k={row ? k : ''}
                    data-ratio={Number.isFinite(ratio) ? ratio.toFixed(6) : ''}
                    data-theory={Number.isFinite(theory) ? theory.toFixed(6) : ''}
                    data-uplink={row ? row.uplink : ''}
                    data-per-rank={row ? row.perRank : ''}
                    data-rounds={row?.rounds ?? 0}
                    data-excluded={row ? row.absent + row.otherK : 0}
                    title={row ? formula(row) : undefined}
                  >
                    <td>{h.name}</td>
                    <td className="mono">{row ? `K = ${k}` : 'not in rounds'}</td>
                    <td className="mono num">{row ? formatBytes(row.uplink) : '–'}</td>
                    <td className="mono num">{row && row.direct ? formatBytes(row.direct) : '–'}</td>
                    <td className="mono num strong">{Number.isFinite(ratio) ? formatRatio(ratio) : '–'}</td>
                    <td
                      className="mono num muted"
                      title={mode && k > 0 ? `${theoryFormula(mode, k)} with F = ${frame} B` : undefined}
                    >
                      {Number.isFinite(theory) ? formatRatio(theory) : '–'}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <ul className="savings-formula small" aria-label="Savings formula">
            {hosts.map((h) => {
              const row = recent[h.host] ?? null;
              return (
                <li key={h.host} className="mono">
                  {h.name}: {row ? formula(row) : 'took part in none of the recent rounds'}
                  {row && (row.absent > 0 || row.otherK > 0) && (
                    <span className="muted">
                      {' '}
                      · excluded: {row.absent} round{row.absent === 1 ? '' : 's'} not taken part in
                      {row.otherK > 0 && `, ${row.otherK} at another K`}
                    </span>
                  )}
                </li>
              );
            })}
          </ul>
          {estimated && (
            <p className="small warn">
              Estimated from counter samples: these rounds carry no per-round bytes.
            </p>
          )}
          {cfg && (
            // Closed, it is one line that says which size is which; open, why the ratios are not 1/K.
            <details className="small savings-meaning" aria-label="Frame and headers">
              <summary>
                F = {formatBytes(frame)} a frame ({sizeNote(cfg)}) · why the ratios are above 1/K
              </summary>
              <p className="muted">
                {sizeWords(cfg)}. {headerWords(mode)} Data channel only, each unit counted in its own round;
                heartbeats on the control channel are paced by time, not rounds.
              </p>
            </details>
          )}
          {(compare.rows || compare.error) && (
            <div className="segmented" role="group" aria-label="Savings view">
              <button type="button" aria-pressed={show === 'chart'} onClick={() => setShow('chart')}>
                Per round
              </button>
              <button type="button" aria-pressed={show === 'compare'} onClick={() => setShow('compare')}>
                Modes compared
              </button>
            </div>
          )}
          {show === 'chart' || !(compare.rows || compare.error) ? (
            <SavingsChart points={savings} hosts={hosts.length} theme={theme} marks={marks} />
          ) : (
            <div className="compare">
              {compare.error && <p className="bad">{compare.error}</p>}
              {compare.rows && (
                <table className="figures" aria-label="Compare modes">
                  <thead>
                    <tr>
                      <th>mode</th>
                      <th className="num">rounds</th>
                      <th className="num">uplink/host/round</th>
                      <th className="num">measured ratio</th>
                      <th className="num">theory</th>
                      <th className="num">ms/round</th>
                    </tr>
                  </thead>
                  <tbody>
                    {compare.rows.map((r) => (
                      <tr key={r.mode}>
                        <td className="nowrap">
                          {r.mode}
                          {r.labOnly && <span className="tag">lab-only</span>}
                        </td>
                        <td className="mono num">{r.rounds}</td>
                        <td className="mono num nowrap">
                          {perHost(r.uplinkBytesPerHostPerRound, formatBytes)}
                        </td>
                        <td className="mono num strong nowrap">{perHost(r.ratioToDirect, formatRatio)}</td>
                        <td className="mono num muted nowrap">{perHost(r.theoryRatio, formatRatio)}</td>
                        <td className="mono num">{r.msPerRound.toFixed(1)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
              <p className="muted small">
                Same workload, {compare.rows?.[0]?.rounds ?? '–'} rounds per mode, data bytes on the uplinks
                counted unit by unit; theory: fold (25 + F) / (K × (4 + F)), forward (25 + F) / (4 + F),
                direct 1.
              </p>
            </div>
          )}
        </div>
      )}
    </section>
  );
}
