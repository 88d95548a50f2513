// A rejected unit in the inspector: flodl's error, the tag flodl computed
// against the one the wire carried, the byte the lab's fault flipped (as
// sent and as received, with the bytes around it), and why the host was
// lost. The hex pane marks the flipped byte and can show either version.
import type { UnitRecord } from '@shared/lab/records';
import type { LossPolicy } from '@shared/lab/topology';
import { hostLossExplained, tagsOf } from '../lib/rejection';

const hex2 = (b: number) => b.toString(16).padStart(2, '0');

export function RejectionPanel({
  record: r,
  policy,
  showSent,
  onShowSent,
}: {
  record: UnitRecord;
  /** null: the run had no topology (see hostLossExplained). */
  policy: LossPolicy | null | undefined;
  showSent: boolean;
  onShowSent: (sent: boolean) => void;
}) {
  if (r.verdict === 'ok') return null;
  const tags = tagsOf(r.flodlError);
  const c = r.corruption;
  const why = hostLossExplained(r, policy);
  return (
    <section className="rejection" aria-label="Rejection">
      <h3>Rejected: {r.verdict}</h3>
      {r.flodlError && (
        <p>
          flodl says: <span className="mono">{r.flodlError}</span>
        </p>
      )}
      {tags && (
        <dl className="kv mono" aria-label="Tags">
          <dt>expected</dt>
          <dd data-tag="computed">0x{tags.computed}</dd>
          <dt>carried</dt>
          <dd data-tag="carried" className="bad">
            0x{tags.carried}
          </dd>
        </dl>
      )}
      {c && (
        <div aria-label="Flipped byte">
          <p>
            The lab&apos;s &ldquo;corrupt next unit&rdquo; fault flipped byte{' '}
            <strong className="mono">{c.offset}</strong> (0x{c.offset.toString(16)}): sent{' '}
            <span className="mono">0x{hex2(c.sent)}</span>, received{' '}
            <span className="mono bad">0x{hex2(c.received)}</span> (bit mask 0x{hex2(c.sent ^ c.received)}).
            {r.captured <= c.offset &&
              ` It lies past the ${r.captured} bytes kept, so the hex pane cannot show it; the bytes around it:`}
          </p>
          <pre className="mono small" aria-label="Bytes around the flipped byte">
            {`at ${c.windowOffset}\nsent     ${c.sentHex.replace(/(..)/g, '$1 ').trim()}\nreceived ${c.receivedHex.replace(/(..)/g, '$1 ').trim()}`}
          </pre>
          {r.captured > c.offset && (
            <div className="segmented" role="group" aria-label="Bytes shown">
              <button type="button" aria-pressed={!showSent} onClick={() => onShowSent(false)}>
                As received
              </button>
              <button type="button" aria-pressed={showSent} onClick={() => onShowSent(true)}>
                As sent
              </button>
            </div>
          )}
        </div>
      )}
      {why && <p aria-label="Why the host was lost">{why}</p>}
    </section>
  );
}
