// Glossary terms, spec sections and MAC coverage.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dissect, type Field } from '../wire/dissect';
import { nobleMac } from '../wire/mac';
import { encodeMuxRecord } from '../wire/mux';
import { encodeRoundFrame } from '../wire/round-frame';
import { SALT_A } from '../wire/test-helpers';
import { FIELD_EXPLANATIONS } from './field-explanations';
import { GLOSSARY, sectionNumber, specSection, termsForField } from './glossary';
import { macCoverage } from './mac-coverage';

const spec = readFileSync(new URL('../../docs/spec/WIRE.md', import.meta.url), 'utf8');

describe('glossary', () => {
  it('has the terms the window uses', () => {
    const terms = GLOSSARY.map((g) => g.term).join(' | ');
    for (const w of [
      'rank',
      'host',
      'relay',
      'controller',
      'coordinator',
      'fold',
      'K',
      'elastic / strict',
      'HostFrame',
      'Broadcast',
      'RoundFrame',
      'ControlFrame',
      'len-frame',
      'salt',
      'MAC',
      'frame ceiling',
      'staleness',
      'committed read',
      'snap length',
      'lab-only modes',
    ])
      expect(terms).toContain(w);
  });

  it('every WIRE.md section the window cites is in the project copy', () => {
    const cited = new Set([
      ...FIELD_EXPLANATIONS.map((x) => x.wire),
      ...GLOSSARY.flatMap((g) => (g.wire ? [g.wire] : [])),
    ]);
    for (const ref of cited) {
      const n = sectionNumber(ref)!;
      expect(specSection(spec, n), ref).toMatch(new RegExp(`^#+ ${n.replace('.', '\\.')}`));
    }
    expect(specSection(spec, '3.2')).toContain('auth_tag');
    expect(specSection(spec, '3.2')).not.toContain('### 3.3');
    expect(specSection(spec, '9.9')).toBe('');
  });

  it('links a MAC field to the salt and MAC terms', () => {
    expect(termsForField('mux.auth_tag', 'HMAC keyed with the salt')).toEqual(
      expect.arrayContaining(['mux', 'mac', 'salt']),
    );
  });
});

describe('MAC coverage', () => {
  const mac = nobleMac(SALT_A);
  it('a mux tag covers header bytes 0..17 and the payload; a footer the frame before it', () => {
    const rf = encodeRoundFrame({ roundKind: 0, weight: 1, tensors: [] }, mac);
    const d = dissect('mux', encodeMuxRecord({ kind: 'HostFrame', payload: rf }, mac), { mac });
    const tag = d.fields.find((f) => f.key === 'mux.auth_tag')!;
    expect(macCoverage(tag, d.fields)).toEqual([
      { start: 0, end: 17 },
      { start: 25, end: 25 + rf.length },
    ]);
    const inner = d.fields.find((f) => f.key === 'mux.payload')!.children as Field[];
    const footer = inner.find((f) => f.key === 'rf.footer')!;
    expect(macCoverage(footer, inner)).toEqual([{ start: 25, end: 25 + rf.length - 8 }]);
    expect(macCoverage(d.fields[0], d.fields)).toEqual([]);
  });
});

describe('finding meanings', () => {
  it('every finding kind links a glossary term and a section the project carries', async () => {
    const { FINDING_MEANINGS } = await import('./findings');
    const { glossaryTerm } = await import('./glossary');
    for (const [kind, m] of Object.entries(FINDING_MEANINGS)) {
      expect(glossaryTerm(m.term), kind).toBeDefined();
      expect(specSection(spec, sectionNumber(m.wire)!), kind).not.toBe('');
      expect(m.text.length, kind).toBeGreaterThan(40);
    }
    expect(Object.keys(FINDING_MEANINGS).sort()).toEqual([
      'dead',
      'exit',
      'fault',
      'hmac',
      'mismatch',
      'rejected',
      'stalled',
    ]);
  });

  it("the stall meaning explains both of its messages, in the messages' own words", async () => {
    const { FINDING_MEANINGS, stallMessage } = await import('./findings');
    const text = FINDING_MEANINGS.stalled.text;
    const barrier = stallMessage(3, false, [1, 2], 812.4);
    const consensus = stallMessage(9, true, [5], 1500);
    expect(barrier).toBe('round 3 barrier has waited 812 ms for rank(s) [1,2]');
    expect(consensus).toBe('round 9: the consensus has not reached rank(s) [5] after 1500 ms');
    for (const phrase of ['barrier has waited', 'the consensus has not reached']) {
      expect(barrier + consensus).toContain(phrase);
      expect(text).toContain(phrase);
    }
    expect(text).toContain('resolved');
  });
});
