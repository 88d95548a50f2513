// The "What does this mean?" line under a finding: what flodl does in that
// situation, with links to the glossary term and the WIRE.md section.
import type { FindingKind } from '@shared/lab/records';
import { FINDING_MEANINGS } from '@shared/explain/findings';
import { glossaryTerm, sectionNumber } from '@shared/explain/glossary';
import { useTeach } from '../store/teach-store';

export function FindingMeaning({ kind }: { kind: FindingKind }) {
  const m = FINDING_MEANINGS[kind];
  if (!m) return null;
  return (
    <details className="finding-meaning small">
      <summary>What does this mean?</summary>
      {m.text}{' '}
      <button type="button" className="link" onClick={() => useTeach.getState().openTerm(m.term)}>
        {glossaryTerm(m.term)?.term ?? m.term}
      </button>{' '}
      <button
        type="button"
        className="link"
        onClick={() => useTeach.getState().openSection(sectionNumber(m.wire) ?? '4')}
      >
        {m.wire}
      </button>
    </details>
  );
}
