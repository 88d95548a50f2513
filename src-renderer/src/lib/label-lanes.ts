// Labels along a time axis that must not print over each other (a reproduction's
// run picture: round numbers above it, kill and fault marks below it). Each label
// takes the first row where it clears the one before it; past the rows it is left
// out (its line and tooltip stay).

export interface PlacedLabel {
  /** Index in the input. */
  index: number;
  /** Row, 0 the nearest the axis. */
  row: number;
}

/**
 * Places labels at `xs` (ascending) with widths `widths` in up to `rows` rows: a label goes in the
 * first row whose last label ends `gap` before it starts. Labels that fit no row are not placed.
 * `anchor`: where x is on the label (its start, or its middle).
 */
export function placeLabels(
  xs: readonly number[],
  widths: readonly number[],
  rows: number,
  anchor: 'start' | 'middle' = 'start',
  gap = 3,
): PlacedLabel[] {
  const ends: number[] = Array.from({ length: rows }, () => -Infinity);
  const out: PlacedLabel[] = [];
  xs.forEach((x, index) => {
    const start = anchor === 'middle' ? x - widths[index] / 2 : x;
    const row = ends.findIndex((end) => start >= end + gap);
    if (row < 0) return;
    ends[row] = start + widths[index];
    out.push({ index, row });
  });
  return out;
}

/** Width of `text` in a monospace font of `px` pixels (about 0.6 em a character). */
export function monoWidth(text: string, px: number): number {
  return text.length * px * 0.6;
}
