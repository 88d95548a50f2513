// The Glossary drawer: every term the window uses, the one asked for marked
// and scrolled to, and the WIRE.md section a citation opened, as readable
// text bundled with the app (docs/spec/WIRE.md).
import { useEffect, useRef } from 'react';
import { GLOSSARY, sectionNumber, specSection } from '@shared/explain/glossary';
import wireSpec from '../../../docs/spec/WIRE.md?raw';
import { useTeach } from '../store/teach-store';
import { useLayer } from './dialog-layers';
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
    const el = term ? ref.current?.querySelector(`#glossary-${term}`) : null;
    el?.scrollIntoView?.({ block: 'nearest' });
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
        <section aria-label={`WIRE.md ${section}`}>
          <h3>WIRE.md {section}</h3>
          <pre className="spec">{specText || 'This section is not in the copy the app carries.'}</pre>
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
