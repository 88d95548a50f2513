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

describe('glossary: terms explained where they appear (issue 30 #16)', () => {
  const term = (id: string) => GLOSSARY.find((g) => g.id === id);

  it('says how flodl rounds an f32 to bf16, and its example is what flodl computes', async () => {
    const bf16 = term('bf16');
    expect(bf16?.term).toMatch(/bf16/);
    expect(bf16?.text).toMatch(/nearest.*even/);
    expect(bf16?.text).toMatch(/0x7FFF/);
    expect(bf16?.text).toMatch(/NaN.*quiet/);
    expect(bf16?.wire).toBe('WIRE.md 3.4');
    // The text's worked examples, through the fold's own encoder.
    const { roundSumsToBf16 } = await import('../fold/encode');
    const xs = new Float32Array([1.00390625, 1.01171875, NaN]);
    roundSumsToBf16(xs);
    expect(bf16?.text).toContain('1.00390625 becomes 1');
    expect(xs[0]).toBe(1);
    expect(bf16?.text).toContain('1.01171875 becomes 1.015625');
    expect(xs[1]).toBe(1.015625);
    expect(Number.isNaN(xs[2])).toBe(true);
  });

  it('explains the control index table and the elastic policy in the findings\u2019 words', () => {
    expect(term('index-table')?.term).toMatch(/index table/);
    expect(term('index-table')?.text).toMatch(/without bumping the version/);
    expect(term('index-table')?.text).toMatch(/v2-late/);
    expect(term('elastic')?.text).toMatch(
      /a round goes on without a rank declared dead instead of waiting for it/,
    );
    expect(term('elastic')?.text).toMatch(/strict/i);
  });

  it('links those terms from the fields that use them', () => {
    expect(termsForField('rf.tensor.dtype', '0 f32, 1 bf16 (the top 16 bits of an f32).')).toContain('bf16');
    expect(termsForField('ctl.msg', 'by its index in the session\u2019s index table')).toContain(
      'index-table',
    );
    expect(termsForField('x', 'elastic session')).toContain('elastic');
  });
});
