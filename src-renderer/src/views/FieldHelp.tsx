// The field status line, like Wireshark's: the selected field's filter name,
// what it means, what flodl does with it, the WIRE.md section (opens in the
// Glossary drawer), glossary links and "Apply as filter". A MAC field also
// says what its key, the session salt, is for; a bf16 tensor, how an f32
// was rounded to it.
import { describeField, explanationFor } from '@shared/explain/field-explanations';
import { BF16_ROUNDING, sectionNumber, termsForField, glossaryTerm } from '@shared/explain/glossary';
import type { FieldLike } from '../lib/field-ranges';
import { WIRE_FILTER_FIELDS, filterForField } from '../lib/wire-filter-fields';
import { useTeach } from '../store/teach-store';
import { useUi } from '../store/ui-store';
import './teach.css';

const MAC_KEYS = new Set(['mux.auth_tag', 'cf.auth_tag', 'rf.footer', 'hs.auth_tag']);
/** Fields whose value names the tensor's dtype ("1 (bf16)", "bf16 [4]"): a bf16 one says how it was rounded. */
const BF16_KEYS = new Set(['rf.tensor', 'rf.tensor.dtype']);

export function FieldHelp({ field, saltHex }: { field: FieldLike | null; saltHex?: string }) {
  const x = explanationFor(field?.key);
  const bf16 = !!x && BF16_KEYS.has(x.key) && /\bbf16\b/.test(field?.value ?? '');
  const terms = x ? termsForField(x.key, describeField(x.key)) : [];
  if (bf16 && !terms.includes('bf16')) terms.push('bf16');
  return (
    <section aria-label="Field help" className="field-help" aria-live="polite">
      {!field ? (
        <span className="muted">Select a field to see what it means.</span>
      ) : !x ? (
        <span>
          <span className="fh-key mono">{field.name}</span>
          <span className="muted">no explanation for this field</span>
        </span>
      ) : (
        <>
          <div>
            <span className="fh-key mono">{x.key}</span>
            <strong>{x.label}:</strong> {x.meaning}
          </div>
          <div>
            <span className="muted">flodl:</span> {x.flodl}
          </div>
          {bf16 && (
            <div>
              <span className="muted">bf16:</span> {BF16_ROUNDING}
            </div>
          )}
          {MAC_KEYS.has(x.key) && (
            <div>
              <span className="muted">key:</span> the session salt{' '}
              <code className="mono">{saltHex ?? 'unknown'}</code>, 16 bytes every process of this session was
              given at launch; only a holder of it can make a tag that verifies. The shaded bytes are what
              this tag covers.
            </div>
          )}
          <div className="fh-links">
            <button
              type="button"
              className="link"
              onClick={() => useTeach.getState().openSection(sectionNumber(x.wire) ?? '3')}
            >
              {x.wire}
            </button>
            {terms.map((id) => (
              <button
                key={id}
                type="button"
                className="link"
                aria-label={`Glossary: ${glossaryTerm(id)?.term ?? id}`}
                onClick={() => useTeach.getState().openTerm(id)}
              >
                {glossaryTerm(id)?.term ?? id}
              </button>
            ))}
            {x.key in WIRE_FILTER_FIELDS && (
              <button
                type="button"
                onClick={() => useUi.getState().set({ filterText: filterForField(x.key, field.value) })}
              >
                Apply as filter
              </button>
            )}
          </div>
        </>
      )}
    </section>
  );
}
