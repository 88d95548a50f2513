// Fixed-height row windowing for the records list: which rows to render for a
// scroll position, and where to scroll to show a row or the newest rows.
// The list's rows are all ROW_HEIGHT tall, so this is arithmetic; the list
// computes its rows from the scroll position it sets itself in the same
// frame, so a list that shrinks (a filter, Back to live) can never render
// rows for a position it no longer has.

export interface RowWindow {
  /** First row to render (inclusive). */
  first: number;
  /** Last row to render (exclusive). */
  end: number;
  /** The scroll position, clamped to what the list can scroll to. */
  top: number;
}

/** Highest scrollTop a list of `count` rows allows in a viewport of `viewport` px. */
export function maxScrollTop(count: number, rowHeight: number, viewport: number): number {
  return Math.max(0, count * rowHeight - viewport);
}

export function clampTop(top: number, count: number, rowHeight: number, viewport: number): number {
  return Math.min(Math.max(0, top), maxScrollTop(count, rowHeight, viewport));
}

/** The rows to render at `top` (clamped first), with `overscan` rows either side. */
export function rowWindow(
  top: number,
  count: number,
  rowHeight: number,
  viewport: number,
  overscan: number,
): RowWindow {
  const t = clampTop(top, count, rowHeight, viewport);
  const first = Math.max(0, Math.floor(t / rowHeight) - overscan);
  const end = Math.min(count, Math.ceil((t + viewport) / rowHeight) + overscan);
  return { first, end: Math.max(first, end), top: t };
}

/** A scroll position that puts row `index` in the middle of the viewport. */
export function centerTop(index: number, count: number, rowHeight: number, viewport: number): number {
  return clampTop(index * rowHeight - (viewport - rowHeight) / 2, count, rowHeight, viewport);
}

/** The nearest scroll position from `top` at which row `index` is fully visible. */
export function revealTop(
  index: number,
  top: number,
  count: number,
  rowHeight: number,
  viewport: number,
): number {
  const rowTop = index * rowHeight;
  if (rowTop < top) return clampTop(rowTop, count, rowHeight, viewport);
  if (rowTop + rowHeight > top + viewport)
    return clampTop(rowTop + rowHeight - viewport, count, rowHeight, viewport);
  return clampTop(top, count, rowHeight, viewport);
}

/**
 * The most rows `rowWindow` can return for a viewport: the rows in sight, one
 * more for a row cut at each edge, and the overscan on both sides. The list
 * keys its rows by view index modulo this number.
 */
export function rowSlots(viewport: number, rowHeight: number, overscan: number): number {
  return Math.ceil(viewport / rowHeight) + 1 + 2 * overscan;
}

/**
 * `win` widened to exactly `slots` rows (or all of them in a shorter list),
 * downwards first. With rows keyed by index modulo `slots`, a window that
 * always holds `slots` rows uses every key on every frame: a row that scrolls
 * out hands its DOM to the one coming in (its text is updated in place)
 * instead of one row being removed and another created, which at thousands
 * of records a second happened to several rows in every frame.
 */
export function fillWindow(win: RowWindow, count: number, slots: number): RowWindow {
  const n = Math.min(slots, count);
  if (win.end - win.first >= n) return win;
  const first = Math.max(0, win.end - n);
  return { first, end: Math.min(count, first + n), top: win.top };
}
