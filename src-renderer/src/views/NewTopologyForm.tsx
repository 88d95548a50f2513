// The topology the next Start runs: hosts, ranks per host, model size, mode,
// loss policy, wire dtype and control index table. Remembered between
// launches. Number fields keep what is typed until it is committed (blur,
// Enter, Start); a wrong value keeps its text and shows why beside the field
// (lib/form-fields.ts).
import {
  CONTROL_INDEX_TABLES,
  CONTROL_INDEX_TABLE_LABELS,
  DEFAULT_CONTROL_INDEX_TABLE,
  type ControlIndexTable,
} from '@shared/wire/control-msg-tables';
import { useUi, type NewTopologyForm as Form } from '../store/ui-store';
import { fieldText, type TypedField } from '../lib/form-fields';
import { commitField, typeField } from '../store/start-topology';
import { RelayChoices } from './RelayChoices';
import { TOPOLOGY_LIMITS } from '@shared/lab/topology-config';
import { DEFAULT_SNAP_LEN } from '@shared/lab/topology';
import { glossaryTerm } from '@shared/explain/glossary';

function TypedInput({
  field,
  label,
  className,
  inputMode,
  placeholder,
  hint,
}: {
  field: TypedField;
  label: string;
  className?: string;
  inputMode: 'numeric' | 'decimal' | 'text';
  placeholder?: string;
  hint: string;
}) {
  const form = useUi((s) => s.form);
  const drafts = useUi((s) => s.formDrafts);
  const error = useUi((s) => s.formErrors[field]);
  const errorId = `form-error-${field}`;
  return (
    <label className={className}>
      {label}
      <input
        type="text"
        inputMode={inputMode}
        spellCheck={false}
        placeholder={placeholder}
        title={hint}
        data-field={field}
        value={fieldText(form, drafts, field)}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? errorId : undefined}
        onChange={(e) => typeField(field, e.target.value)}
        onBlur={() => commitField(field)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.ctrlKey) commitField(field);
        }}
      />
      {error && (
        <span id={errorId} className="field-error" role="alert">
          {error}
        </span>
      )}
    </label>
  );
}

/** What the index table setting means, for its tooltip. */
export const INDEX_TABLE_HELP =
  'Which numbers the control messages use (WIRE.md 3.5). flodl inserted message variants without ' +
  'bumping the version, so every end of the control channel must agree on one table: ' +
  CONTROL_INDEX_TABLES.map((t) => `${t}: ${CONTROL_INDEX_TABLE_LABELS[t]}`).join('; ') +
  '.';

export function NewTopologyForm() {
  const form = useUi((s) => s.form);
  const formError = useUi((s) => s.formErrors.form);
  const patch = (p: Partial<Form>) => useUi.getState().set({ form: { ...useUi.getState().form, ...p } });
  const L = TOPOLOGY_LIMITS;
  return (
    <details className="new-topology">
      <summary>New topology (used by Start)</summary>
      <div className="form-grid">
        <TypedInput field="hosts" label="Hosts" inputMode="numeric" hint={`1 to ${L.maxHosts}`} />
        <TypedInput
          field="ranksPerHost"
          label="Ranks per host"
          inputMode="numeric"
          hint={`1 to ${L.maxRanksPerHost}`}
        />
        <TypedInput
          field="perHost"
          label="Or ranks host by host"
          className="span2"
          inputMode="text"
          placeholder="e.g. 4,2,3"
          hint="Ranks of each host, separated by commas; when given, it wins over Hosts x Ranks per host"
        />
        <TypedInput
          field="modelMiB"
          label="Model (MiB)"
          inputMode="decimal"
          hint={`4 bytes to ${L.maxModelBytes / 1024 / 1024} MiB; fractions allowed (0.5)`}
        />
        <TypedInput
          field="snapLen"
          label="Snap length (B)"
          inputMode="numeric"
          hint={`Bytes the tap keeps of each unit, ${L.minSnapLen} to ${L.maxSnapLen} (default ${DEFAULT_SNAP_LEN}): a longer unit is captured short, and its verdict stays the engine's, on the whole unit`}
        />
        <label>
          Mode
          <select value={form.mode} onChange={(e) => patch({ mode: e.target.value as Form['mode'] })}>
            <option value="fold">fold (flodl 0.7)</option>
            <option value="forward">forward (lab-only)</option>
            <option value="direct">direct (lab-only)</option>
          </select>
        </label>
        <label title={glossaryTerm('elastic')?.text}>
          Policy
          <select value={form.policy} onChange={(e) => patch({ policy: e.target.value as Form['policy'] })}>
            <option value="elastic">elastic</option>
            <option value="strict">strict</option>
          </select>
        </label>
        <label title={glossaryTerm('bf16')?.text}>
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
        {form.mode === 'fold' && <RelayChoices />}
        {formError && (
          <p className="field-error span2" role="alert" data-field-error="form">
            {formError}
          </p>
        )}
      </div>
    </details>
  );
}
