// The topology the next Start runs: hosts, ranks per host, model size, mode,
// loss policy, wire dtype and control index table. Remembered between launches.
import {
  CONTROL_INDEX_TABLES,
  CONTROL_INDEX_TABLE_LABELS,
  DEFAULT_CONTROL_INDEX_TABLE,
  type ControlIndexTable,
} from '@shared/wire/control-msg-tables';
import { useUi, parsePerHost, type NewTopologyForm as Form } from '../store/ui-store';

/** What the index table setting means, for its tooltip. */
export const INDEX_TABLE_HELP =
  'Which numbers the control messages use (WIRE.md 3.5). flodl inserted message variants without ' +
  'bumping the version, so every end of the control channel must agree on one table: ' +
  CONTROL_INDEX_TABLES.map((t) => `${t}: ${CONTROL_INDEX_TABLE_LABELS[t]}`).join('; ') +
  '.';

export function NewTopologyForm() {
  const form = useUi((s) => s.form);
  const patch = (p: Partial<Form>) => useUi.getState().set({ form: { ...useUi.getState().form, ...p } });
  const num = (v: string, lo: number, hi: number) => Math.max(lo, Math.min(hi, Math.round(Number(v) || lo)));
  return (
    <details className="new-topology">
      <summary>New topology (used by Start)</summary>
      <div className="form-grid">
        <label>
          Hosts
          <input
            type="number"
            min={1}
            max={8}
            value={form.hosts}
            onChange={(e) => patch({ hosts: num(e.target.value, 1, 8) })}
          />
        </label>
        <label>
          Ranks per host
          <input
            type="number"
            min={1}
            max={16}
            value={form.ranksPerHost}
            onChange={(e) => patch({ ranksPerHost: num(e.target.value, 1, 16) })}
          />
        </label>
        <label className="span2">
          Or ranks host by host
          <input
            type="text"
            placeholder="e.g. 4,2,3"
            spellCheck={false}
            value={form.perHost ?? ''}
            aria-invalid={form.perHost && !parsePerHost(form.perHost) ? true : undefined}
            onChange={(e) => patch({ perHost: e.target.value })}
          />
        </label>
        <label>
          Model (MiB)
          <input
            type="number"
            min={0.001}
            max={256}
            step="any"
            value={form.modelMiB}
            onChange={(e) => patch({ modelMiB: Math.max(0.001, Math.min(256, Number(e.target.value) || 1)) })}
          />
        </label>
        <label>
          Mode
          <select value={form.mode} onChange={(e) => patch({ mode: e.target.value as Form['mode'] })}>
            <option value="fold">fold (flodl 0.7)</option>
            <option value="forward">forward (lab-only)</option>
            <option value="direct">direct (lab-only)</option>
          </select>
        </label>
        <label>
          Policy
          <select value={form.policy} onChange={(e) => patch({ policy: e.target.value as Form['policy'] })}>
            <option value="elastic">elastic</option>
            <option value="strict">strict</option>
          </select>
        </label>
        <label>
          Dtype
          <select value={form.dtype} onChange={(e) => patch({ dtype: e.target.value as Form['dtype'] })}>
            <option value="f32">f32</option>
            <option value="bf16">bf16</option>
          </select>
        </label>
        <label title={INDEX_TABLE_HELP}>
          Index table
          <select
            value={form.controlIndexTable ?? DEFAULT_CONTROL_INDEX_TABLE}
            aria-description={INDEX_TABLE_HELP}
            onChange={(e) => patch({ controlIndexTable: e.target.value as ControlIndexTable })}
          >
            {CONTROL_INDEX_TABLES.map((t) => (
              <option key={t} value={t}>
                {t}
                {t === DEFAULT_CONTROL_INDEX_TABLE ? ' (default)' : ''}
              </option>
            ))}
          </select>
        </label>
      </div>
    </details>
  );
}
