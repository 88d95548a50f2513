// Round time against hosts for each mode (the round model beyond this
// machine), both axes logarithmic; a ring marks each host count at which a
// mode's bottleneck moves, and the chart's label names every move.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import type { BeyondResult } from '@shared/model/beyond';
import { MODE_COLOURS } from './ExploreCharts';

const AXIS = { dark: { axis: '#8590a0', grid: '#262d37' }, light: { axis: '#667085', grid: '#e4e8ee' } };

// uPlot hands null for ticks it leaves out on a log axis.
const fmtMs = (x: number | null) =>
  x == null ? '' : x >= 1000 ? `${+(x / 1000).toPrecision(3)} s` : `${+x.toPrecision(3)} ms`;

/** x: every host count of the curves; per mode its round and, at the moves only, the same round again. */
export function beyondData(r: BeyondResult): uPlot.AlignedData {
  const xs = [...new Set(r.modes.flatMap((m) => m.curve.map((c) => c.hosts)))].sort((a, b) => a - b);
  const cols: (number | null)[][] = [];
  for (const m of r.modes) {
    const at = new Map(m.curve.map((c) => [c.hosts, c.roundMs]));
    const moved = new Set(m.moves.map((x) => x.hosts));
    cols.push(xs.map((h) => at.get(h) ?? null));
    cols.push(xs.map((h) => (moved.has(h) ? (at.get(h) ?? null) : null)));
  }
  return [xs, ...cols] as uPlot.AlignedData;
}

/** The chart's words: each mode's moves, for screen readers and the e2e test. */
export function movesText(r: BeyondResult): string {
  return r.modes
    .map(
      (m) =>
        `${m.mode}: ` +
        (m.moves.length
          ? m.moves.map((x) => `at ${x.hosts} hosts from ${x.from} to ${x.to}`).join(', ')
          : `${m.curve[0]?.resource ?? 'none'} throughout`),
    )
    .join('; ');
}

export function BeyondChart({ r, theme }: { r: BeyondResult; theme: string }) {
  const el = useRef<HTMLDivElement>(null);
  const key = `${r.modes.map((m) => m.mode).join(',')}|${theme}`;
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const div = el.current;
    if (!div) return;
    const series: uPlot.Series[] = [{ label: 'hosts' }];
    for (const m of r.modes) {
      series.push({
        label: `${m.mode}`,
        stroke: MODE_COLOURS[m.mode],
        width: 2,
        value: (_u, v) => (v == null ? '–' : fmtMs(v)),
      });
      series.push({
        label: `${m.mode}: bottleneck moves`,
        stroke: MODE_COLOURS[m.mode],
        paths: () => null,
        points: { show: true, size: 14, width: 2, fill: 'transparent' },
        value: (_u, v) => (v == null ? '–' : fmtMs(v)),
      });
    }
    const { axis, grid } = AXIS[theme === 'light' ? 'light' : 'dark'];
    const u = new uPlot(
      {
        width: Math.max(240, div.clientWidth),
        height: 260,
        series,
        legend: { show: true, live: false },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: false, distr: 3, log: 2 }, y: { distr: 3, log: 10 } },
        axes: [
          { stroke: axis, grid: { stroke: grid }, ticks: { stroke: grid }, label: 'hosts' },
          {
            stroke: axis,
            grid: { stroke: grid },
            ticks: { stroke: grid },
            size: 70,
            values: (_u, t) => t.map(fmtMs),
          },
        ],
      },
      beyondData(r),
      div,
    );
    plot.current = u;
    const ro = new ResizeObserver(() => u.setSize({ width: Math.max(240, div.clientWidth), height: 260 }));
    ro.observe(div);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
    // Rebuilt when the series change (modes, theme); data updates in place below.
  }, [key]);

  useEffect(() => {
    plot.current?.setData(beyondData(r));
  }, [r]);

  return (
    <div
      ref={el}
      className="chart explore-chart beyond-chart"
      role="img"
      aria-label={`Round time against hosts, per mode; the bottleneck moves: ${movesText(r)}`}
    />
  );
}
