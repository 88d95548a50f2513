// Draws the records list's rows on a canvas, for the list following a stream
// faster than anyone reads (RecordsView). The DOM rows' text all changes in
// every frame there, and their layout, style, paint and text shaping were the
// largest share of the page's main thread at 20,000 records a second (about
// 7 ms a frame); 27 rows of 10 cells drawn with fillText took 1.6 ms (p50).
// Everything the picture needs comes from the DOM the page already has: the
// columns from the grid head (same grid, same container queries, same
// column choices), the colours from the theme's custom properties, the fonts
// from the rows' CSS.
import type { UnitRecord } from '@shared/lab/records';
import { rowCells } from './record-cells';

export interface RowColumn {
  left: number;
  width: number;
}

export interface RowPaintStyle {
  /** The ten columns' boxes in CSS px from the list's left edge; null where hidden. */
  columns: (RowColumn | null)[];
  /** Per column, each text as it fits its box (cut with an ellipsis); made with the style, so a new width starts afresh. */
  fitted: Map<string, string>[];
  mono: string;
  sans: string;
  colors: {
    text: string;
    muted: string;
    ok: string;
    bad: string;
    warn: string;
    up: string;
    down: string;
    accent: string;
    rowAlt: string;
  };
}

const COLUMN_COUNT = 10;
/** The rows' right padding (`.rec-row`). */
const ROW_PADDING_RIGHT = 8;
const MONO_COLUMNS = new Set([0, 1, 2, 6, 7]);
/** The Length column: its number in the text colour, a short capture's star after it in the warning colour. */
const LENGTH_COLUMN = 7;
/** Texts remembered per column before its memory starts afresh (links and kinds repeat; summaries mostly do). */
const FITTED_MAX = 4_000;

/** Reads the columns from the grid head and the colours and fonts from the list's CSS. */
export function readRowPaintStyle(head: HTMLElement, list: HTMLElement): RowPaintStyle {
  const origin = list.getBoundingClientRect().left;
  const columns: (RowColumn | null)[] = [];
  for (let i = 0; i < COLUMN_COUNT; i++) {
    const cell = head.children[i] as HTMLElement | undefined;
    const box = cell?.getBoundingClientRect();
    columns.push(box && box.width > 0 ? { left: box.left - origin, width: box.width } : null);
  }
  const css = getComputedStyle(list);
  const v = (name: string) => css.getPropertyValue(name).trim();
  const family = (probe: string) => {
    const el = document.createElement('span');
    el.className = probe;
    list.appendChild(el);
    const f = getComputedStyle(el).fontFamily;
    el.remove();
    return f;
  };
  return {
    columns,
    fitted: columns.map(() => new Map()),
    mono: `12px ${family('mono')}`,
    sans: `12px ${css.fontFamily}`,
    colors: {
      text: css.color,
      muted: v('--muted'),
      ok: v('--ok'),
      bad: v('--bad'),
      warn: v('--warn'),
      up: v('--up'),
      down: v('--down'),
      accent: v('--accent'),
      rowAlt: v('--row-alt'),
    },
  };
}

function cellColor(r: UnitRecord, col: number, c: RowPaintStyle['colors']): string {
  switch (col) {
    case 4:
    case 9:
      return c.muted;
    case 5:
      return r.dir === 'up' ? c.up : c.down;
    case 8:
      return r.verdict === 'ok' ? c.ok : c.bad;
    default:
      return c.text;
  }
}

export interface PaintedRow {
  record: UnitRecord;
  /** Its place in the view (odd places get the alternate background). */
  index: number;
}

/**
 * Paints `rows` top to bottom, each `rowHeight` CSS px, on a canvas of `width` x `height` CSS px.
 * Column by column, not row by row: a canvas parses every font and colour it is given, and the
 * cells alternate between two fonts, so row by row set the font about 8 times a row (the
 * painter's own time was two thirds of the frame's canvas work); here it is set once a column,
 * and a colour only when it changes.
 */
export function paintRows(
  ctx: CanvasRenderingContext2D,
  rows: readonly PaintedRow[],
  style: RowPaintStyle,
  opts: { width: number; height: number; rowHeight: number; selectedSeq: number | null; scale: number },
): void {
  const { width, height, rowHeight, selectedSeq, scale } = opts;
  const c = style.colors;
  ctx.setTransform(scale, 0, 0, scale, 0, 0);
  ctx.clearRect(0, 0, width, height);
  for (let n = 0; n < rows.length; n++) {
    const { record: r, index } = rows[n];
    const y = n * rowHeight;
    if (r.seq === selectedSeq) {
      ctx.fillStyle = c.accent;
      ctx.fillRect(0, y, width, rowHeight);
    } else if (r.verdict !== 'ok') {
      ctx.globalAlpha = 0.14;
      ctx.fillStyle = c.bad;
      ctx.fillRect(0, y, width, rowHeight);
      ctx.globalAlpha = 1;
    } else if (index % 2) {
      ctx.fillStyle = c.rowAlt;
      ctx.fillRect(0, y, width, rowHeight);
    }
  }
  const cells = rows.map((row) => rowCells(row.record));
  ctx.textBaseline = 'middle';
  let color = '';
  for (let col = 0; col < COLUMN_COUNT; col++) {
    const box = style.columns[col];
    if (!box) continue;
    ctx.font = MONO_COLUMNS.has(col) ? style.mono : style.sans;
    const right = col === LENGTH_COLUMN;
    ctx.textAlign = right ? 'right' : 'left';
    const star =
      right && rows.some((row) => row.record.captured < row.record.length) ? ctx.measureText('*').width : 0;
    const x = right ? box.left + box.width : box.left;
    // The head spans the scrollbar too, so its last column is wider than the rows' by as much.
    const room = Math.min(box.width, width - ROW_PADDING_RIGHT - box.left);
    const fit = style.fitted[col];
    for (let n = 0; n < rows.length; n++) {
      const text = cells[n][col];
      if (!text) continue;
      const r = rows[n].record;
      const y = n * rowHeight + rowHeight / 2;
      const want = r.seq === selectedSeq ? '#fff' : cellColor(r, col, c);
      if (want !== color) ctx.fillStyle = color = want;
      if (right && r.captured < r.length) {
        ctx.fillText(fitText(ctx, text, room - star, fit, `${text}*`), x - star, y);
        // The star keeps its colour on the selected row too, as the DOM row's does.
        ctx.fillStyle = color = c.warn;
        ctx.fillText('*', x, y);
      } else ctx.fillText(fitText(ctx, text, room, fit), x, y);
    }
  }
}

/**
 * `text` as it fits `width` in the context's font: whole, or its longest head that fits with an
 * ellipsis, or nothing where not even the ellipsis fits. `key`: where the memo keeps it (a
 * starred length has less room than the same number without its star).
 */
function fitText(
  ctx: CanvasRenderingContext2D,
  text: string,
  width: number,
  memo: Map<string, string>,
  key = text,
): string {
  let fitted = memo.get(key);
  if (fitted !== undefined) return fitted;
  if (ctx.measureText(text).width <= width) fitted = text;
  else if (ctx.measureText('…').width > width) fitted = '';
  else {
    let lo = 0;
    let hi = text.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ctx.measureText(text.slice(0, mid) + '…').width <= width) lo = mid;
      else hi = mid - 1;
    }
    fitted = text.slice(0, lo) + '…';
  }
  if (memo.size >= FITTED_MAX) memo.clear();
  memo.set(key, fitted);
  return fitted;
}
