// The spec excerpts' Markdown, parsed to blocks the window renders as elements (never as HTML).
import { describe, expect, it } from 'vitest';
import { parseInline, parseMarkdown } from './markdown';

describe('markdown subset', () => {
  it('reads code spans, strong, emphasis, links and section references inline', () => {
    expect(parseInline('a `x_y` **b *c* e** *d* [e](https://f.example/g) §4.8.')).toEqual([
      { t: 'text', v: 'a ' },
      { t: 'code', v: 'x_y' },
      { t: 'text', v: ' ' },
      {
        t: 'strong',
        c: [
          { t: 'text', v: 'b ' },
          { t: 'em', c: [{ t: 'text', v: 'c' }] },
          { t: 'text', v: ' e' },
        ],
      },
      { t: 'text', v: ' ' },
      { t: 'em', c: [{ t: 'text', v: 'd' }] },
      { t: 'text', v: ' ' },
      { t: 'link', href: 'https://f.example/g', c: [{ t: 'text', v: 'e' }] },
      { t: 'text', v: ' ' },
      { t: 'section', num: '4.8' },
      { t: 'text', v: '.' },
    ]);
  });

  it('leaves what is not markup as text: snake_case, a lone *, 2 * 3', () => {
    expect(parseInline('salt_hex and 2 * 3 = 6')).toEqual([{ t: 'text', v: 'salt_hex and 2 * 3 = 6' }]);
  });

  it('reads headings, paragraphs joined across lines, nested lists and tables', () => {
    const md = [
      '### 3.2 MuxRecord',
      '',
      'One record',
      'per unit.',
      '',
      '1. Read the header.',
      '   - Blocking `read_from`: an EOF',
      '     anywhere is an error.',
      '2. Magic must match.',
      '',
      '| offset | field |',
      '|---|---|',
      '| 0 | magic `0xF10D17D0` |',
    ].join('\n');
    const blocks = parseMarkdown(md);
    expect(blocks.map((b) => b.t)).toEqual(['heading', 'p', 'list', 'table']);
    expect(blocks[0]).toEqual({ t: 'heading', level: 3, c: [{ t: 'text', v: '3.2 MuxRecord' }] });
    expect(blocks[1]).toEqual({ t: 'p', c: [{ t: 'text', v: 'One record per unit.' }] });
    const list = blocks[2];
    if (list.t !== 'list') throw new Error('not a list');
    expect(list.ordered).toBe(true);
    expect(list.items).toHaveLength(2);
    const sub = list.items[0].sub[0];
    if (sub.t !== 'list') throw new Error('not a nested list');
    expect(sub.ordered).toBe(false);
    expect(sub.items[0].c).toEqual([
      { t: 'text', v: 'Blocking ' },
      { t: 'code', v: 'read_from' },
      { t: 'text', v: ': an EOF anywhere is an error.' },
    ]);
    const table = blocks[3];
    if (table.t !== 'table') throw new Error('not a table');
    expect(table.head).toEqual([[{ t: 'text', v: 'offset' }], [{ t: 'text', v: 'field' }]]);
    expect(table.rows[0][1]).toEqual([
      { t: 'text', v: 'magic ' },
      { t: 'code', v: '0xF10D17D0' },
    ]);
  });

  it('splits table cells on | but not inside a code span', () => {
    const [table] = parseMarkdown('| a | b |\n|---|---|\n| `x | y` | z |');
    if (table.t !== 'table') throw new Error('not a table');
    expect(table.rows[0]).toEqual([[{ t: 'code', v: 'x | y' }], [{ t: 'text', v: 'z' }]]);
  });

  it('reads a --- line as a rule, not a paragraph', () => {
    expect(parseMarkdown('a\n\n---\n')).toEqual([{ t: 'p', c: [{ t: 'text', v: 'a' }] }, { t: 'hr' }]);
  });

  it('keeps a fenced block verbatim', () => {
    expect(parseMarkdown('```\n**not bold**\n```')).toEqual([{ t: 'code', v: '**not bold**' }]);
  });
});
