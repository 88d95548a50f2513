// The field help line explains a bf16 tensor's rounding in place, where bf16 appears.
import { describe, expect, it } from 'vitest';
import { renderToStaticMarkup } from 'react-dom/server';
import { FieldHelp } from './FieldHelp';

const field = (key: string, value: string) => ({
  name: key.split('.').at(-1)!,
  offset: 0,
  length: 1,
  value,
  key,
});

describe('FieldHelp', () => {
  it('says how an f32 becomes bf16 on a bf16 tensor\u2019s dtype and entry (issue 30 #16)', () => {
    for (const f of [field('rf.tensor.dtype', '1 (bf16)'), field('rf.tensor', 'bf16 [4]')]) {
      const html = renderToStaticMarkup(<FieldHelp field={f} />);
      expect(html, f.key).toMatch(/round(ed|s) to nearest, ties to even/);
      expect(html, f.key).toMatch(/quiet/);
      expect(html, f.key).toMatch(/aria-label="Glossary: bf16/);
    }
  });

  it('does not talk about bf16 on an f32 tensor', () => {
    const html = renderToStaticMarkup(<FieldHelp field={field('rf.tensor.dtype', '0 (f32)')} />);
    expect(html).not.toMatch(/ties to even/);
  });

  it('links the index table from a control message field', () => {
    const html = renderToStaticMarkup(<FieldHelp field={field('ctl.msg', 'Heartbeat')} />);
    expect(html).toMatch(/aria-label="Glossary: control index table/);
  });
});
