// The records list's rows as one picture, while the list follows a stream
// faster than anyone reads (see lib/row-paint.ts for why). It sits where the
// DOM rows would, inside the scroller, so the wheel and the scrollbar work as
// on the rows: scrolling up stops following and the DOM rows come back, as
// does a click, which selects the row under it.
import { useLayoutEffect, useRef } from 'react';
import { paintRows, readRowPaintStyle, type PaintedRow, type RowPaintStyle } from '../lib/row-paint';

/** How to read the rows while they are a picture (the canvas's tooltip, the counts line's note). */
export const PICTURE_HINT =
  'Rows stream faster than anyone reads: scroll up, click a row or pause the display to read them';

export function RecordCanvas({
  rows,
  top,
  width,
  height,
  rowHeight,
  selectedSeq,
  styleKey,
  headRef,
  onPick,
}: {
  rows: readonly PaintedRow[];
  /** Its place in the scroller's content, CSS px (the first row's top). */
  top: number;
  width: number;
  height: number;
  rowHeight: number;
  selectedSeq: number | null;
  /** Changes whenever the columns or the list's width may have: the style is read again (the theme is added here). */
  styleKey: string;
  headRef: React.RefObject<HTMLElement | null>;
  onPick: (row: PaintedRow) => void;
}) {
  const ref = useRef<HTMLCanvasElement>(null);
  const style = useRef<{ key: string; style: RowPaintStyle } | null>(null);
  const scale = typeof window === 'undefined' ? 1 : window.devicePixelRatio || 1;

  useLayoutEffect(() => {
    const canvas = ref.current;
    const head = headRef.current;
    const ctx = canvas?.getContext('2d');
    if (!canvas || !head || !ctx) return;
    // The theme as the document has it now, not as the store says: the attribute is set in an effect
    // after this commit's layout effects, and the next frame of the stream reads the new colours.
    const key = `${styleKey}|${document.documentElement.dataset.theme ?? ''}`;
    if (style.current?.key !== key) {
      style.current = { key, style: readRowPaintStyle(head, canvas.parentElement ?? canvas) };
    }
    paintRows(ctx, rows, style.current.style, { width, height, rowHeight, selectedSeq, scale });
  });

  const newest = rows.length ? rows[rows.length - 1].record.seq : -1;
  return (
    <canvas
      ref={ref}
      className="rec-canvas"
      aria-hidden="true"
      title={PICTURE_HINT}
      data-newest-seq={newest}
      width={Math.round(width * scale)}
      height={Math.round(height * scale)}
      style={{ width, height, transform: `translateY(${top}px)` }}
      onClick={(e) => {
        const row = rows[Math.floor(e.nativeEvent.offsetY / rowHeight)];
        if (row) onPick(row);
      }}
    />
  );
}
