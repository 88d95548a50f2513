// Explore's "Beyond this machine": the round model (src-shared/model) carried
// to topologies no one machine runs, as `relay-lab predict` does. The
// calibration is the reference one (docs/model.md); `relay-lab predict` reads
// this machine's own file.
import { useMemo } from 'react';
import type { UplinkMode, WireDtype } from '@shared/lab/topology';
import { parseSize } from '@shared/sweep/spec';
import { predictBeyond, type BeyondResult } from '@shared/model/beyond';
import { REFERENCE_CALIBRATION } from '@shared/model/reference-calibration';
import { formatBandwidth, parseBandwidth, parseLatency } from '@shared/model/units';
import { formatBytes } from '../lib/format';
import { useExplore, type BeyondForm } from '../store/explore-store';
import { BeyondChart } from './BeyondChart';
import { MODE_COLOURS } from './ExploreCharts';

const MODES: UplinkMode[] = ['fold', 'forward', 'direct'];

const fmtMs = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(x >= 100 ? 0 : 2)} ms`);

function whole(text: string, name: string): number {
  if (!/^\d+$/.test(text.trim())) throw new Error(`${name} must be a whole number, got '${text}'`);
  return Number(text);
}

/** The form as the model's input, or the first bad field's one-line error. */
export function beyondOf(f: BeyondForm): BeyondResult {
  const modes = MODES.filter((m) => f.modes[m]);
  return predictBeyond(
    {
      hosts: whole(f.hosts, 'hosts'),
      ranksPerHost: whole(f.ranksPerHost, 'ranks per host'),
      modelBytes: parseSize(f.modelBytes, 'model'),
      dtype: f.dtype,
      modes,
      hostNic: {
        bandwidth: parseBandwidth(f.hostBandwidth, 'host NIC'),
        latencyMs: parseLatency(f.hostLatency, 'host latency'),
      },
      controllerNic: {
        bandwidth: parseBandwidth(f.controllerBandwidth, 'controller NIC'),
        latencyMs: parseLatency(f.controllerLatency, 'controller latency'),
      },
      controllerCores: whole(f.controllerCores, 'controller cores'),
    },
    REFERENCE_CALIBRATION,
  );
}

export function BeyondView({ theme }: { theme: string }) {
  const form = useExplore((s) => s.beyond);
  const set = (patch: Partial<BeyondForm>) => useExplore.setState({ beyond: { ...form, ...patch } });
  const out = useMemo((): { result: BeyondResult } | { error: string } => {
    try {
      return { result: beyondOf(form) };
    } catch (e) {
      return { error: (e as Error).message };
    }
  }, [form]);
  const field = (label: string, key: keyof Omit<BeyondForm, 'modes' | 'dtype'>, title: string) => (
    <label>
      {label}
      <input
        aria-label={label}
        value={form[key]}
        title={title}
        onChange={(e) => set({ [key]: e.target.value })}
      />
    </label>
  );
  return (
    <section aria-label="Beyond this machine" className="beyond">
      <p className="muted small">
        The round model (docs/model.md) from the reference calibration measured on{' '}
        {REFERENCE_CALIBRATION.machine.cpus} cores on {REFERENCE_CALIBRATION.measuredAt.slice(0, 10)}: one
        machine per host, one controller machine; `relay-lab predict` reads this machine&apos;s own
        calibration (`relay-lab calibrate`).
      </p>
      <form className="explore-form" onSubmit={(e) => e.preventDefault()}>
        {field('Hosts', 'hosts', '1 to 4096')}
        {field('Ranks per host', 'ranksPerHost', '1 to 16')}
        {field('Model', 'modelBytes', 'per rank, e.g. 1GiB')}
        <label>
          Dtype
          <select
            aria-label="Beyond dtype"
            value={form.dtype}
            onChange={(e) => set({ dtype: e.target.value as WireDtype })}
          >
            <option value="f32">f32</option>
            <option value="bf16">bf16</option>
          </select>
        </label>
        <fieldset>
          <legend>Modes</legend>
          {MODES.map((m) => (
            <label key={m} className="check">
              <input
                type="checkbox"
                aria-label={`beyond mode ${m}`}
                checked={form.modes[m]}
                onChange={(e) => set({ modes: { ...form.modes, [m]: e.target.checked } })}
              />
              {m}
            </label>
          ))}
        </fieldset>
        {field('Host NIC', 'hostBandwidth', 'each direction: 12.5GB/s, 100Gb/s, or bytes/s')}
        {field('Host latency', 'hostLatency', 'one way: 0.5ms, 20us')}
        {field('Controller NIC', 'controllerBandwidth', 'each direction: 12.5GB/s, 100Gb/s, or bytes/s')}
        {field('Controller latency', 'controllerLatency', 'one way: 0.5ms, 20us')}
        {field(
          'Controller cores',
          'controllerCores',
          'the controller verifies and folds its connections over these',
        )}
      </form>
      {'error' in out ? (
        <p className="bad" role="alert">
          {out.error}
        </p>
      ) : (
        <BeyondResultView r={out.result} theme={theme} />
      )}
    </section>
  );
}

function BeyondResultView({ r, theme }: { r: BeyondResult; theme: string }) {
  const k = r.input.ranksPerHost;
  const leads = Object.entries(r.lead).map(
    ([m, x]) =>
      `fold's lead over ${m}: ${x.toFixed(2)}x (K = ${k})` +
      (r.leadAfterMove[m as UplinkMode] !== undefined
        ? `, ${r.leadAfterMove[m as UplinkMode]!.toFixed(2)}x with a controller NIC fast enough for both`
        : ''),
  );
  return (
    <>
      <table className="explore-table" aria-label="Predicted rounds">
        <thead>
          <tr>
            <th>mode</th>
            <th>round</th>
            <th>bottleneck</th>
            <th>host NIC up / down</th>
            <th>controller NIC in / out</th>
            <th>controller NIC that moves it</th>
          </tr>
        </thead>
        <tbody>
          {r.modes.map((m) => {
            const p = m.prediction;
            return (
              <tr key={m.mode} data-mode={m.mode} className="beyond-mode">
                <td>
                  <span className="swatch" style={{ background: MODE_COLOURS[m.mode] }} />
                  {m.mode}
                </td>
                <td className="mono" title={p.stages.map((s) => `${s.stage} ${fmtMs(s.ms)}`).join(', ')}>
                  {fmtMs(p.roundMs)}
                </td>
                <td className="mono bottleneck" title={`${p.bottleneck.what}: ${fmtMs(p.bottleneck.ms)}`}>
                  {p.bottleneck.resource} ({p.bottleneck.stage})
                </td>
                <td className="mono">
                  {formatBytes(p.nicBytes.hostUp)} / {formatBytes(p.nicBytes.hostDown)}
                </td>
                <td className="mono">
                  {formatBytes(p.nicBytes.controllerIn)} / {formatBytes(p.nicBytes.controllerOut)}
                </td>
                <td className="mono move">
                  {m.controllerNicToMove !== null && m.afterMove
                    ? `above ${formatBandwidth(m.controllerNicToMove)}: ${m.afterMove.bottleneck.resource}, ${fmtMs(m.afterMove.roundMs)}`
                    : '–'}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {leads.length > 0 && (
        <p className="explore-sentence" aria-label="Fold's lead">
          {leads.join('; ')}
        </p>
      )}
      <figure>
        <figcaption>Round time against hosts (K = {k}); rings mark where the bottleneck moves</figcaption>
        <BeyondChart r={r} theme={theme} />
      </figure>
    </>
  );
}
