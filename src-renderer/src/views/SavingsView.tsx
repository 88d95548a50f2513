// What the relay saves: per host, the uplink bytes per round measured on the
// socket against K x what one rank sends (what `direct` would put on the
// uplink), with the theory next to it; and Compare modes, which runs the same
// workload in fold, forward and direct.
import { useEffect, useState } from 'react';
import { useLab, runCompare, workloadKey } from '../store/lab-store';
import { useThrottled } from '../lib/use-throttled';
import { READOUT_MS } from '../lib/use-sampled';
import { useUi } from '../store/ui-store';
import { recentSavings, type HostSavings } from '../store/apply-batch';
import type { UplinkMode } from '@shared/lab/topology';
import { formatBytes, formatRatio, plural } from '../lib/format';
import { SavingsChart } from './SavingsChart';

/** What the table means in each mode, in one sentence. */
export function modeMeaning(mode: UplinkMode | undefined): string {
  if (mode === 'forward')
    return "forward (lab-only): the relay forwards each rank's frame unfolded, so the uplink carries K frames; ratio ≈ 1 plus mux headers, nothing is saved.";
  if (mode === 'direct')
    return 'direct (lab-only): no relay; each rank sends to the controller itself. This is the baseline: the host sends K x one rank, ratio 1 by definition.';
  return 'fold: the relay folds the frames of its K live ranks into one HostFrame; direct would send K x one rank. K counts the ranks folded in the round.';
}

/** The ratio as arithmetic on the live numbers. */
export function formula(row: HostSavings, mode: UplinkMode | undefined): string {
  const up = mode === 'direct' ? row.direct : row.uplink;
  const ratio = mode === 'direct' ? 1 : row.ratio;
  return (
    `ratio = uplink / (K × one rank) = ${formatBytes(up)} / (${row.k} × ${formatBytes(row.perRank)}) = ` +
    `${Number.isFinite(ratio) ? formatRatio(ratio) : '–'} (mean of ${row.rounds} round${row.rounds === 1 ? '' : 's'})`
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
          {savings.length
            ? `mean of the last ${savings.length === 1 ? 'round' : plural(Math.min(20, savings.length), 'round')}`
            : 'no round measured yet'}
        </span>
        <button
          type="button"
          className="push-right"
          disabled={compare.busy || !snapshot}
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
              <th className="num">theory</th>
            </tr>
          </thead>
          <tbody>
            {hosts.map((h) => {
              const row = recent[h.host] ?? null;
              const k = row?.k ?? 0;
              const uplink = row ? (mode === 'direct' ? row.direct : row.uplink) : 0;
              const ratio = row ? (mode === 'direct' ? 1 : row.ratio) : NaN;
              return (
                <tr
                  key={h.host}
                  aria-label={`savings ${h.name}`}
                  data-k={row ? k : ''}
                  data-ratio={Number.isFinite(ratio) ? ratio.toFixed(6) : ''}
                  data-rounds={row?.rounds ?? 0}
                  data-excluded={row ? row.absent + row.otherK : 0}
                  title={row ? formula(row, mode) : undefined}
                >
                  <td>{h.name}</td>
                  <td className="mono">{row ? `K = ${k}` : 'not in rounds'}</td>
                  <td className="mono num">{row ? formatBytes(uplink) : '–'}</td>
                  <td className="mono num">{row && row.direct ? formatBytes(row.direct) : '–'}</td>
                  <td className="mono num strong">{Number.isFinite(ratio) ? formatRatio(ratio) : '–'}</td>
                  <td className="mono num muted">
                    {mode === 'fold' && k > 0 ? `1/${k} = ${formatRatio(1 / k)}` : '1'}
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
                {h.name}: {row ? formula(row, mode) : 'took part in none of the recent rounds'}
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
              Same workload, {compare.rows?.[0]?.rounds ?? '–'} rounds per mode, bytes measured on the uplink
              sockets; theory: fold 1/K plus headers, forward and direct 1.
            </p>
          </div>
        )}
      </div>
    </section>
  );
}
