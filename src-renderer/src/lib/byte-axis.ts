// The savings chart's byte axis and size, as numbers: ticks a power-of-two
// apart (4 MiB, 8 MiB, 16 MiB read as the sizes they are), as many as fit,
// never fewer than three, and a plot that keeps a readable height whatever
// the pane and the legend leave it, and a box no taller than the pane shows
// (scrolled to, a box taller than its pane always had its top cut off).

/** The round axis's height in uPlot (its tick labels and ticks); uPlot pads the plot's top by a third of it. */
export const X_AXIS_PX = 34;
/** uPlot's height (plot area plus the round axis and the top padding, about 51 px) never goes below this. */
export const MIN_CHART_PX = 182;
/** The chart box's height when the pane leaves the room: a plot of about 200 px. */
export const PREFERRED_BOX_PX = 260;
/** Ticks on the byte axis stay at least this far apart (one line of 11 px text and air). */
export const MIN_TICK_GAP_PX = 26;

/** Ticks from 0 covering `max`: the smallest power-of-two step that keeps them MIN_TICK_GAP_PX apart. */
export function byteTicks(max: number, plotPx: number): number[] {
  const top = Math.max(1, max);
  // At least two intervals (0, half, top): one "0 B" tick says nothing about the scale.
  const intervals = Math.max(2, Math.floor(plotPx / MIN_TICK_GAP_PX));
  let step = 1;
  while (top / step > intervals) step *= 2;
  const ticks: number[] = [];
  for (let v = 0; v < top; v += step) ticks.push(v);
  ticks.push(ticks[ticks.length - 1] + step);
  return ticks;
}

/** The byte scale's top: the last tick above the data, so the top of the axis is labelled. */
export function byteTop(max: number, plotPx: number): number {
  const ticks = byteTicks(max * 1.05, plotPx);
  return ticks[ticks.length - 1];
}

/** uPlot's height in a box of `boxPx` whose legend takes `legendPx`: the box's share, never unreadable. */
export function chartHeight(boxPx: number, legendPx: number): number {
  return Math.max(MIN_CHART_PX, Math.floor(boxPx - legendPx - 4));
}

/**
 * The chart box's height: what the pane shows of its body (`visiblePx`), up to the preferred
 * height, so that scrolled into view the whole chart shows, top included; never less than a
 * readable plot with its legend (a pane that small scrolls).
 */
export function chartBoxPx(visiblePx: number, legendPx: number): number {
  return Math.max(MIN_CHART_PX + legendPx + 4, Math.min(PREFERRED_BOX_PX, Math.floor(visiblePx)));
}

/** The Explore charts' plot height: uPlot's 220 px less the topology axis (50 px) and its top padding. */
export const EXPLORE_PLOT_PX = 160;

/**
 * The Explore byte chart's scale: the same power-of-two steps as the savings chart, so the
 * ticks read 256 KiB, 512 KiB, 768 KiB, 1 MiB instead of a fraction of the data's maximum
 * (976.6 KiB, 732.4 KiB), with the top of the axis on a tick.
 */
export function exploreByteAxis(max: number, plotPx = EXPLORE_PLOT_PX): { top: number; ticks: number[] } {
  const top = byteTop(max, plotPx);
  return { top, ticks: byteTicks(top, plotPx).filter((t) => t <= top) };
}

/** A tick's label, as short as it is exact: "1 MiB", "1.5 MiB", "768 KiB" (no "768.0 KiB"). */
export function formatByteTick(n: number): string {
  const units: [number, string][] = [
    [1024 ** 3, 'GiB'],
    [1024 ** 2, 'MiB'],
    [1024, 'KiB'],
  ];
  for (const [size, unit] of units) {
    if (Math.abs(n) >= size) return `${Number((n / size).toFixed(2))} ${unit}`;
  }
  return `${Math.round(n)} B`;
}
