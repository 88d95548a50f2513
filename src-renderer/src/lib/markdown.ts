// The subset of Markdown the spec the app carries (docs/spec/WIRE.md) uses, parsed to plain data
// that Markdown.tsx turns into React elements: headings, paragraphs, nested lists, pipe tables,
// fenced code, and inline code spans, **strong**, *emphasis*, [links](url) and "§4.8" section
// references. No HTML is ever produced from the text, so nothing in it can run or inject markup.

export type Inline =
  | { t: 'text'; v: string }
  | { t: 'code'; v: string }
  | { t: 'strong'; c: Inline[] }
  | { t: 'em'; c: Inline[] }
  | { t: 'link'; href: string; c: Inline[] }
  | { t: 'section'; num: string };

export interface ListItem {
  c: Inline[];
  sub: Block[];
}

export type Block =
  | { t: 'heading'; level: number; c: Inline[] }
  | { t: 'p'; c: Inline[] }
  | { t: 'list'; ordered: boolean; start: number; items: ListItem[] }
  | { t: 'table'; head: Inline[][]; rows: Inline[][][] }
  | { t: 'code'; v: string }
  | { t: 'hr' };

// Tried in this order at each position; the earliest match in the text wins.
const INLINE =
  /`([^`]+)`|\*\*(\S(?:.*?\S)?)\*\*|\*(\S(?:[^*]*?\S)?)\*|\[([^\]]+)\]\(([^)\s]+)\)|§(\d+(?:\.\d+)*)/g;

export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  const push = (v: string) => {
    if (!v) return;
    const last = out[out.length - 1];
    if (last?.t === 'text') last.v += v;
    else out.push({ t: 'text', v });
  };
  let at = 0;
  for (const m of text.matchAll(INLINE)) {
    push(text.slice(at, m.index));
    if (m[1] !== undefined) out.push({ t: 'code', v: m[1] });
    else if (m[2] !== undefined) out.push({ t: 'strong', c: parseInline(m[2]) });
    else if (m[3] !== undefined) out.push({ t: 'em', c: parseInline(m[3]) });
    else if (m[4] !== undefined) out.push({ t: 'link', href: m[5], c: parseInline(m[4]) });
    else out.push({ t: 'section', num: m[6] });
    at = m.index + m[0].length;
  }
  push(text.slice(at));
  return out;
}

const HEADING = /^(#{1,6})\s+(.*)$/;
const ITEM = /^(\s*)([-*]|\d+\.)\s+(.*)$/;
const FENCE = /^\s*```/;
const RULE = /^\s*(-{3,}|\*{3,})\s*$/;
const isRow = (l: string) => l.trimStart().startsWith('|');
const indentOf = (l: string) => l.length - l.trimStart().length;

/** A table row's cells: split on | outside code spans, the outer pipes dropped. */
function cells(line: string): string[] {
  const s = line.trim().replace(/^\|/, '').replace(/\|$/, '');
  const out: string[] = [];
  let cur = '';
  let inCode = false;
  for (const ch of s) {
    if (ch === '`') inCode = !inCode;
    if (ch === '|' && !inCode) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  out.push(cur.trim());
  return out;
}

/** The list starting at lines[i] (its first item's indent), and the index after it. */
function parseList(lines: string[], i: number): [Block, number] {
  const first = ITEM.exec(lines[i])!;
  const base = first[1].length;
  const ordered = /\d/.test(first[2]);
  const items: ListItem[] = [];
  let text = '';
  let sub: Block[] = [];
  const flush = () => {
    if (items.length || text) items.push({ c: parseInline(text), sub });
  };
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      // A blank line ends the list unless the next line goes on with it (an item or indented text).
      const next = lines[i + 1];
      if (next === undefined || indentOf(next) < base || (indentOf(next) === base && !ITEM.exec(next))) break;
      i++;
      continue;
    }
    const m = ITEM.exec(line);
    if (m && m[1].length === base) {
      if (text || sub.length || items.length) flush();
      text = m[3];
      sub = [];
      i++;
    } else if (m && m[1].length > base) {
      const [nested, after] = parseList(lines, i);
      sub.push(nested);
      i = after;
    } else if (indentOf(line) > base && !isRow(line) && !HEADING.test(line)) {
      text += ` ${line.trim()}`;
      i++;
    } else break;
  }
  flush();
  return [{ t: 'list', ordered, start: ordered ? parseInt(first[2], 10) : 1, items }, i];
}

export function parseMarkdown(md: string): Block[] {
  const lines = md.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i++;
      continue;
    }
    if (FENCE.test(line)) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !FENCE.test(lines[i])) body.push(lines[i++]);
      blocks.push({ t: 'code', v: body.join('\n') });
      i++;
      continue;
    }
    if (RULE.test(line)) {
      blocks.push({ t: 'hr' });
      i++;
      continue;
    }
    const h = HEADING.exec(line);
    if (h) {
      blocks.push({ t: 'heading', level: h[1].length, c: parseInline(h[2].trim()) });
      i++;
      continue;
    }
    if (isRow(line)) {
      const rows: string[][] = [];
      while (i < lines.length && isRow(lines[i])) rows.push(cells(lines[i++]));
      const sep = rows.length > 1 && rows[1].every((c) => /^:?-+:?$/.test(c));
      const head = sep ? rows[0] : [];
      const body = sep ? rows.slice(2) : rows;
      blocks.push({ t: 'table', head: head.map(parseInline), rows: body.map((r) => r.map(parseInline)) });
      continue;
    }
    if (ITEM.test(line)) {
      const [list, after] = parseList(lines, i);
      blocks.push(list);
      i = after;
      continue;
    }
    const para: string[] = [];
    while (
      i < lines.length &&
      lines[i].trim() &&
      !HEADING.test(lines[i]) &&
      !isRow(lines[i]) &&
      !ITEM.test(lines[i]) &&
      !FENCE.test(lines[i])
    )
      para.push(lines[i++].trim());
    blocks.push({ t: 'p', c: parseInline(para.join(' ')) });
  }
  return blocks;
}
