// Spec text rendered as elements from lib/markdown.ts's blocks: React escapes every string, so
// the text can only ever be text. A "§4.8" reference opens that section in the same drawer; a
// link shows its text with the address beside it (the window never navigates away).
import type { ReactNode } from 'react';
import { parseMarkdown, type Block, type Inline } from '../lib/markdown';

type OnSection = (num: string) => void;

function inline(xs: Inline[], onSection?: OnSection): ReactNode[] {
  return xs.map((x, i) => {
    switch (x.t) {
      case 'text':
        return x.v;
      case 'code':
        return (
          <code key={i} className="mono">
            {x.v}
          </code>
        );
      case 'strong':
        return <strong key={i}>{inline(x.c, onSection)}</strong>;
      case 'em':
        return <em key={i}>{inline(x.c, onSection)}</em>;
      case 'link':
        return (
          <span key={i} className="md-link">
            {inline(x.c, onSection)} <span className="muted mono">({x.href})</span>
          </span>
        );
      case 'section':
        return onSection ? (
          <button key={i} type="button" className="link" onClick={() => onSection(x.num)}>
            §{x.num}
          </button>
        ) : (
          `§${x.num}`
        );
    }
  });
}

function block(b: Block, key: number, onSection?: OnSection): ReactNode {
  switch (b.t) {
    case 'heading': {
      // The drawer's own h3 names the section; the excerpt's headings sit below it.
      const H = b.level <= 3 ? 'h4' : 'h5';
      return <H key={key}>{inline(b.c, onSection)}</H>;
    }
    case 'hr':
      return <hr key={key} />;
    case 'p':
      return <p key={key}>{inline(b.c, onSection)}</p>;
    case 'code':
      return (
        <pre key={key} className="mono">
          {b.v}
        </pre>
      );
    case 'list': {
      const items = b.items.map((it, i) => (
        <li key={i}>
          {inline(it.c, onSection)}
          {it.sub.map((s, j) => block(s, j, onSection))}
        </li>
      ));
      return b.ordered ? (
        <ol key={key} start={b.start === 1 ? undefined : b.start}>
          {items}
        </ol>
      ) : (
        <ul key={key}>{items}</ul>
      );
    }
    case 'table':
      return (
        <table key={key} className="md-table">
          {b.head.length > 0 && (
            <thead>
              <tr>
                {b.head.map((c, i) => (
                  <th key={i}>{inline(c, onSection)}</th>
                ))}
              </tr>
            </thead>
          )}
          <tbody>
            {b.rows.map((r, i) => (
              <tr key={i}>
                {r.map((c, j) => (
                  <td key={j}>{inline(c, onSection)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      );
  }
}

export function Markdown({ text, onSection }: { text: string; onSection?: OnSection }) {
  return <>{parseMarkdown(text).map((b, i) => block(b, i, onSection))}</>;
}
