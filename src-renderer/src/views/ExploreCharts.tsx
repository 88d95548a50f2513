// The Explore view's two charts (uPlot on canvas): bytes per host uplink per
// round and median round time, against topology, one colour per mode; the
// measurement as dots, the theory as a dashed line, and on the time chart the
// round model's prediction (docs/model.md) as hollow rings on a dotted line.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import type { UplinkMode } from '@shared/lab/topology';
import { topologyLabel } from '@shared/sweep/spec';
import type { SweepCase, SweepSpec } from '@shared/sweep/types';
import { byteTicks, EXPLORE_PLOT_PX, exploreByteAxis, formatByteTick } from '../lib/byte-axis';
import { formatBytes } from '../lib/format';

export const MODE_COLOURS: Record<UplinkMode, string> = {
  fold: '#3ecf8e',
  forward: '#f5a524',
  direct: '#4ea1ff',
};

const AXIS = { dark: { axis: '#8590a0', grid: '#262d37' }, light: { axis: '#667085', grid: '#e4e8ee' } };

export type ChartKind = 'bytes' | 'time';

/** The busiest host's number: the uplink that paces the round. */
const worst = (xs: number[]) => (xs.length ? Math.max(...xs) : null);

type Series = 'measured' | 'theory' | 'predicted';

function valueOf(c: SweepCase | undefined, kind: ChartKind, which: Series): number | null {
  if (!c || c.error) return null;
  if (kind === 'bytes') return worst(which === 'theory' ? c.dataUp.theory : c.dataUp.measured);
  if (which === 'theory') return c.theoryRoundMs;
  if (which === 'predicted') return c.predicted?.roundMs ?? null;
  return c.roundsCompleted > 0 ? c.roundMs.median : null;
}

/** The series each mode has on a chart: the time chart adds the model's prediction. */
export function seriesOf(kind: ChartKind): Series[] {
  return kind === 'time' ? ['measured', 'theory', 'predicted'] : ['measured', 'theory'];
}

export function chartData(spec: SweepSpec, cases: SweepCase[], kind: ChartKind): uPlot.AlignedData {
  const labels = spec.topologies.map(topologyLabel);
  const x = labels.map((_, i) => i);
  const cols: (number | null)[][] = [];
  for (const m of spec.modes) {
    const of = (t: string) => cases.find((c) => c.mode === m && c.topology === t);
    for (const which of seriesOf(kind)) cols.push(labels.map((t) => valueOf(of(t), kind, which)));
  }
  return [x, ...cols] as uPlot.AlignedData;
}

export function ExploreChart({
  spec,
  cases,
  kind,
  theme,
}: {
  spec: SweepSpec;
  cases: SweepCase[];
  kind: ChartKind;
  theme: string;
}) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const key = `${spec.topologies.map(topologyLabel).join(',')}|${spec.modes.join(',')}|${theme}`;

  useEffect(() => {
    const div = el.current;
    if (!div) return;
    const labels = spec.topologies.map(topologyLabel);
    const fmt = (v: number | null) =>
      v == null ? '–' : kind === 'bytes' ? formatBytes(v) : `${v.toFixed(v >= 100 ? 0 : 1)} ms`;
    const series: uPlot.Series[] = [{ label: 'topology', value: (_u, v) => labels[v] ?? '' }];
    for (const m of spec.modes) {
      series.push({
        label: `${m} measured`,
        stroke: MODE_COLOURS[m],
        fill: MODE_COLOURS[m],
        paths: () => null,
        points: { show: true, size: 9, fill: MODE_COLOURS[m] },
        value: (_u, v) => fmt(v),
      });
      series.push({
        label: `${m} theory`,
        stroke: MODE_COLOURS[m],
        width: 1.5,
        dash: [5, 4],
        points: { show: false },
        value: (_u, v) => fmt(v),
      });
      if (kind === 'time')
        series.push({
          label: `${m} predicted`,
          stroke: MODE_COLOURS[m],
          width: 1,
          dash: [1, 3],
          points: { show: true, size: 11, width: 2, fill: 'transparent' },
          value: (_u, v) => fmt(v),
        });
    }
    const { axis, grid } = AXIS[theme === 'light' ? 'light' : 'dark'];
    const u = new uPlot(
      {
        width: Math.max(240, div.clientWidth),
        height: 220,
        series,
        legend: { show: true, live: false },
        cursor: { drag: { x: false, y: false } },
        scales: {
          x: { time: false, range: () => [-0.5, labels.length - 0.5] },
          // Bytes on round binary steps (256 KiB, 512 KiB, 1 MiB), the top on a tick; times as before.
          y: {
            range: (_u, _min, max) =>
              kind === 'bytes' ? [0, exploreByteAxis(max ?? 0).top] : [0, Math.max(1, (max ?? 1) * 1.15)],
          },
        },
        axes: [
          {
            stroke: axis,
            grid: { show: false },
            ticks: { stroke: grid },
            splits: () => labels.map((_, i) => i),
            values: (_u, ticks) => ticks.map((t) => labels[t] ?? ''),
          },
          {
            stroke: axis,
            grid: { stroke: grid },
            ticks: { stroke: grid },
            size: 80,
            ...(kind === 'bytes' && {
              splits: (_u: uPlot, _i: number, _min: number, max: number) =>
                byteTicks(max, EXPLORE_PLOT_PX).filter((t) => t <= max),
            }),
            values: (_u, ticks) => ticks.map((t) => (kind === 'bytes' ? formatByteTick(t) : fmt(t))),
          },
        ],
      },
      chartData(spec, cases, kind),
      div,
    );
    plot.current = u;
    const ro = new ResizeObserver(() => u.setSize({ width: Math.max(240, div.clientWidth), height: 220 }));
    ro.observe(div);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
    // Rebuilt when the axes change (topologies, modes, theme); data updates in place below.
  }, [key, kind]);

  useEffect(() => {
    plot.current?.setData(chartData(spec, cases, kind));
  }, [spec, cases, kind]);

  return (
    <div
      ref={el}
      className="chart explore-chart"
      role="img"
      aria-label={
        kind === 'bytes'
          ? 'Data bytes per host uplink per round against topology, measured and theory'
          : 'Median round time against topology, measured, theory and predicted'
      }
    />
  );
}
