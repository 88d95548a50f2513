// Per host of the New topology form: Relay Lab's relay, or a command (an
// external relay: a flodl build started under flodl's launch contract, the
// hex RelaySpec in FLODL_INTERNAL_RELAY_JSON). Remembered with the form.
import { useUi, type NewTopologyForm as Form } from '../store/ui-store';
import { parsePerHost } from '../lib/form-fields';
import { TOPOLOGY_LIMITS } from '@shared/lab/topology-config';

const COMMAND_HELP =
  "Started with flodl's launch contract (FLODL_INTERNAL_RELAY_JSON), split into words as a shell would, " +
  'run without a shell. E.g. /path/to/flodl/target/release/your-binary or npx relay-lab relay --from-env';

export function RelayChoices() {
  const form = useUi((s) => s.form);
  const hosts = Math.min(
    TOPOLOGY_LIMITS.maxHosts,
    (parsePerHost(form.perHost) ?? Array.from({ length: form.hosts })).length,
  );
  const relays = form.relays ?? [];
  const patch = (h: number, p: Partial<{ external: boolean; command: string }>) => {
    const f = useUi.getState().form;
    const next: NonNullable<Form['relays']> = Array.from(
      { length: Math.max(hosts, f.relays?.length ?? 0) },
      (_, i) => f.relays?.[i] ?? { external: false, command: '' },
    );
    next[h] = { ...next[h], ...p };
    useUi.getState().set({ form: { ...f, relays: next } });
  };
  return (
    <fieldset className="span2 relay-choices">
      <legend>Relays</legend>
      {Array.from({ length: hosts }, (_, h) => {
        const r = relays[h] ?? { external: false, command: '' };
        return (
          <div key={h} className="relay-choice">
            <label>
              h{h}
              <select
                data-field={`relay-${h}`}
                value={r.external ? 'command' : 'lab'}
                onChange={(e) => patch(h, { external: e.target.value === 'command' })}
              >
                <option value="lab">Relay Lab&apos;s relay</option>
                <option value="command">a command</option>
              </select>
            </label>
            {r.external && (
              <input
                type="text"
                spellCheck={false}
                aria-label={`h${h} relay command`}
                data-field={`relay-command-${h}`}
                title={COMMAND_HELP}
                placeholder="/path/to/flodl-build"
                value={r.command}
                onChange={(e) => patch(h, { command: e.target.value })}
              />
            )}
          </div>
        );
      })}
    </fieldset>
  );
}
