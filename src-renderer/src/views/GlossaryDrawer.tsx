// The Glossary drawer: every term the window uses, the one asked for marked
// and scrolled to, and the WIRE.md section a citation opened, rendered from
// the Markdown bundled with the app (docs/spec/WIRE.md) by views/Markdown.tsx.
import { useEffect, useRef } from 'react';
import { GLOSSARY, sectionNumber, specSection } from '@shared/explain/glossary';
import wireSpec from '../../../docs/spec/WIRE.md?raw';
import { useTeach } from '../store/teach-store';
import { useLayer } from './dialog-layers';
import { Markdown } from './Markdown';
import './teach.css';

export function GlossaryButton() {
  const open = useTeach((s) => s.glossaryOpen);
  return (
    <button type="button" aria-pressed={open} onClick={() => useTeach.getState().toggleGlossary()}>
      Glossary
    </button>
  );
}

export function GlossaryDrawer() {
  const { glossaryOpen, term, section } = useTeach();
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    if (!glossaryOpen) return;
    // A section opened (from a term's citation far down the list, or a § inside a section) shows
    // from its heading; otherwise the term asked for.
    const el = section
      ? ref.current?.querySelector('[data-spec-section]')
      : term
        ? ref.current?.querySelector(`#glossary-${term}`)
        : null;
    el?.scrollIntoView?.({ block: section ? 'start' : 'nearest' });
  }, [glossaryOpen, term, section]);
  // A panel over the window (not modal: the inspector stays usable beside it): focus in, Escape, focus back.
  useLayer(ref, glossaryOpen, () => useTeach.getState().close(), false);
  if (!glossaryOpen) return null;
  const specText = section ? specSection(wireSpec, section) : '';
  return (
    <section ref={ref} role="region" aria-label="Glossary" className="glossary-drawer" tabIndex={-1}>
      <header className="panel-head">
        <h2>Glossary</h2>
        <button type="button" aria-label="Close glossary" onClick={() => useTeach.getState().close()}>
          ×
        </button>
      </header>
      {section && (
        <section aria-label={`WIRE.md ${section}`} data-spec-section={section}>
          <h3>WIRE.md {section}</h3>
          <div className="spec">
            {specText ? (
              <Markdown text={specText} onSection={(num) => useTeach.getState().openSection(num)} />
            ) : (
              'This section is not in the copy the app carries.'
            )}
          </div>
        </section>
      )}
      <dl>
        {GLOSSARY.map((g) => (
          <div key={g.id}>
            <dt id={`glossary-${g.id}`} className={g.id === term ? 'current' : ''}>
              {g.term}
            </dt>
            <dd className={g.id === term ? 'current' : ''}>
              {g.text}{' '}
              {g.wire && (
                <button
                  type="button"
                  className="link"
                  onClick={() => useTeach.getState().openSection(sectionNumber(g.wire!) ?? '3')}
                >
                  {g.wire}
                </button>
              )}
            </dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
