// The drawer shows a WIRE.md section as rendered text: tables, code, emphasis, lists; never raw Markdown.
import { afterEach, describe, expect, it } from 'vitest';
import { renderToStaticMarkup } from 'react-dom/server';
import { GlossaryDrawer } from './GlossaryDrawer';
import { Markdown } from './Markdown';
import { useTeach } from '../store/teach-store';
import { specSection } from '@shared/explain/glossary';
import wireSpec from '../../../docs/spec/WIRE.md?raw';

const initial = { ...useTeach.getInitialState() };

describe('GlossaryDrawer spec section', () => {
  afterEach(() => Object.assign(useTeach.getInitialState(), initial));

  it('renders WIRE.md 3.2 as a table, code and lists, not raw Markdown (issue 30 #15)', () => {
    Object.assign(useTeach.getInitialState(), { glossaryOpen: true, section: '3.2' });
    const html = renderToStaticMarkup(<GlossaryDrawer />);
    expect(html).toMatch(/<table/);
    expect(html).toMatch(/<code[^>]*>0xF10D17D0<\/code>/);
    expect(html).toMatch(/<ol/);
    expect(html).toMatch(/<strong>/);
    expect(html).not.toMatch(/\|---/);
    expect(html).not.toMatch(/\*\*/);
    expect(html).not.toMatch(/`/);
    // A "§4.1" reference is a button that opens that section.
    expect(html).toMatch(/<button[^>]*>§4\.1<\/button>/);
  });

  it('leaves no Markdown markup in any section of the spec the app carries', () => {
    const nums = [...wireSpec.matchAll(/^#{2,3} (\d+(?:\.\d+)?)[. ]/gm)].map((m) => m[1]);
    expect(nums.length).toBeGreaterThan(30);
    for (const num of nums) {
      const html = renderToStaticMarkup(<Markdown text={specSection(wireSpec, num)} />);
      expect(html, num).not.toMatch(/\*\*|`|\|---|(^|>)#{1,6} |<p>---<\/p>/);
    }
  });

  it('renders markup in text as text, never as HTML', () => {
    const html = renderToStaticMarkup(
      <Markdown text={'<img src=x onerror=alert(1)> **<b>x</b>** [a](javascript:alert(1))'} />,
    );
    expect(html).not.toMatch(/<img|<b>|href="javascript/);
    expect(html).toContain('&lt;img');
  });
});
