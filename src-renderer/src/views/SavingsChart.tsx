// Uplink bytes per round, per host, against what `direct` would send: drawn
// on canvas by uPlot, updated in place (no re-mount per round).
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import type { RoundMark, SavingsPoint } from '../store/apply-batch';
import { bandsOf } from '../lib/chart-bands';
import { formatBytes } from '../lib/format';
import { byteTicks, byteTop, chartBoxPx, chartHeight, X_AXIS_PX } from '../lib/byte-axis';

const HOST_COLOURS = ['#4ea1ff', '#f5a524', '#3ecf8e', '#e5484d', '#b67df2', '#2ec4c4', '#f27db8', '#9aa0a6'];

const AXIS_COLOURS = {
  dark: { axis: '#8590a0', grid: '#262d37' },
  light: { axis: '#667085', grid: '#e4e8ee' },
};
const ROUND_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 100000];
/** The round axis and the padding uPlot puts above the plot area (a third of the axis), inside uPlot's height. */
const AXES_PX = X_AXIS_PX + Math.round(X_AXIS_PX / 3);
/** What the chart shows, for its tooltip and for screen readers. */
const CHART_TITLE =
  'Data bytes per round: solid, each host’s uplink; dashed (K×), what direct would send (K × one rank)';

function toData(points: readonly SavingsPoint[], hosts: number): uPlot.AlignedData {
  const x = points.map((p) => p.round);
  const series: (number | null)[][] = [];
  for (let h = 0; h < hosts; h++) {
    // A round the host did not take part in (K = 0) is a gap, not a zero.
    series.push(points.map((p) => (p.k?.[h] === 0 ? null : (p.uplink[h] ?? null))));
    series.push(points.map((p) => (p.direct[h] ? p.direct[h] : null)));
  }
  return [x, ...series] as uPlot.AlignedData;
}

export function SavingsChart({
  points,
  hosts,
  theme,
  marks = [],
}: {
  points: readonly SavingsPoint[];
  hosts: number;
  theme: string;
  marks?: readonly RoundMark[];
}) {
  const marksRef = useRef(marks);
  marksRef.current = marks;
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const hostsRef = useRef(hosts);

  useEffect(() => {
    const div = el.current;
    if (!div) return;
    hostsRef.current = hosts;
    const series: uPlot.Series[] = [{ label: 'round' }];
    for (let h = 0; h < hosts; h++) {
      const stroke = HOST_COLOURS[h % HOST_COLOURS.length];
      // Short legend labels: one line for four hosts, so the plot keeps the pane's height.
      series.push({
        label: `h${h}`,
        stroke,
        width: 2,
        points: { show: false },
        value: (_u, v) => (v == null ? '–' : formatBytes(v)),
      });
      series.push({
        label: 'K×',
        stroke,
        width: 1,
        dash: [4, 4],
        points: { show: false },
        value: (_u, v) => (v == null ? '–' : formatBytes(v)),
      });
    }
    // Canvas colours cannot follow CSS variables, and the page's theme
    // attribute may not be updated yet when this runs: take them from the prop.
    const { axis: axisStroke, grid } = AXIS_COLOURS[theme === 'light' ? 'light' : 'dark'];
    // The legend sits inside the box and wraps with its width: the plot gets what it leaves.
    const legendPx = () => div.querySelector<HTMLElement>('.u-legend')?.offsetHeight ?? 0;
    let height = chartHeight(div.clientHeight, 20);
    const plotPx = () => height - AXES_PX;
    const u = new uPlot(
      {
        width: Math.max(200, div.clientWidth),
        height,
        series,
        legend: { show: true, live: false },
        cursor: { drag: { x: false, y: false } },
        // Faults, kills and pauses as coloured bands at their round, so an effect can be traced to its cause.
        hooks: {
          drawClear: [
            (u: uPlot) => {
              const ctx = u.ctx;
              const { top, height } = u.bbox;
              ctx.save();
              for (const [round, colour] of bandsOf(marksRef.current)) {
                const x0 = u.valToPos(round - 0.5, 'x', true);
                const x1 = u.valToPos(round + 0.5, 'x', true);
                if (x1 < u.bbox.left || x0 > u.bbox.left + u.bbox.width) continue;
                ctx.fillStyle = colour;
                ctx.fillRect(
                  Math.max(x0, u.bbox.left),
                  top,
                  Math.max(2, Math.min(x1, u.bbox.left + u.bbox.width) - Math.max(x0, u.bbox.left)),
                  height,
                );
              }
              ctx.restore();
            },
          ],
        },
        scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, byteTop(max, plotPx())] } },
        axes: [
          // Rounds are whole numbers; bytes step in powers of two so ticks read as 4 MiB, 8 MiB, 16 MiB.
          {
            stroke: axisStroke,
            grid: { stroke: grid },
            ticks: { stroke: grid },
            size: X_AXIS_PX,
            incrs: ROUND_STEPS,
            values: (_u, ticks) => ticks.map((t) => String(t)),
          },
          {
            stroke: axisStroke,
            grid: { stroke: grid },
            ticks: { stroke: grid },
            size: 84,
            splits: (_u, _i, _min, max) => byteTicks(max, plotPx()).filter((t) => t <= max),
            values: (_u, ticks) => ticks.map((t) => formatBytes(t)),
          },
        ],
      },
      toData([], hosts),
      div,
    );
    plot.current = u;
    // The pane that scrolls the chart: the box is never taller than what it shows.
    const pane = div.parentElement;
    const fit = () => {
      if (pane) {
        const style = getComputedStyle(pane);
        const visible = pane.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
        const box = `${chartBoxPx(visible, legendPx())}px`;
        if (div.style.minHeight !== box) {
          div.style.minHeight = box;
          div.style.flexBasis = box;
        }
      }
      height = chartHeight(div.clientHeight, legendPx());
      u.setSize({ width: Math.max(200, div.clientWidth), height });
    };
    fit();
    // The box's size comes from the pane (CSS flex and the pane's height), not from the plot:
    // resizing the plot cannot loop.
    const ro = new ResizeObserver(fit);
    ro.observe(div);
    if (pane) ro.observe(pane);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
    // Axis colours come from the theme's CSS variables: rebuild when it changes.
  }, [hosts, theme]);

  useEffect(() => {
    plot.current?.setData(toData(points, hostsRef.current));
  }, [points, hosts, theme]);

  // A new fault band shows at once, even between rounds.
  useEffect(() => {
    plot.current?.redraw(false);
  }, [marks]);

  return (
    <div
      ref={el}
      className="chart"
      role="img"
      aria-label="Uplink bytes per round against direct"
      aria-description={CHART_TITLE}
      title={CHART_TITLE}
    />
  );
}
