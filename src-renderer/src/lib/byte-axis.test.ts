import { describe, expect, it } from 'vitest';
import {
  byteTicks,
  byteTop,
  chartBoxPx,
  chartHeight,
  exploreByteAxis,
  formatByteTick,
  MIN_CHART_PX,
  PREFERRED_BOX_PX,
} from './byte-axis';

const MiB = 1024 * 1024;

describe('savings chart byte axis', () => {
  it('labels a fold/direct pair with several byte ticks, not one "0 B"', () => {
    // 4 MiB folded against 16 MiB direct, the smallest plot the chart allows.
    const plot = MIN_CHART_PX - 51;
    const top = byteTop(16 * MiB, plot);
    expect(top).toBeGreaterThanOrEqual(16 * MiB);
    const ticks = byteTicks(top, plot).filter((t) => t <= top);
    expect(ticks.length).toBeGreaterThanOrEqual(3);
    expect(ticks[0]).toBe(0);
    expect(ticks.at(-1)).toBe(top);
    expect(ticks).toContain(4 * MiB);
    // A power-of-two step: each tick reads as a whole size.
    const step = ticks[1];
    expect(Math.log2(step) % 1).toBe(0);
    ticks.forEach((t, i) => expect(t).toBe(i * step));
  });

  it('has at least three ticks even on a cramped plot, more on a tall one', () => {
    expect(byteTicks(16 * MiB, 10).length).toBeGreaterThanOrEqual(3);
    expect(byteTicks(16 * MiB, 400).length).toBeGreaterThan(byteTicks(16 * MiB, 140).length);
    expect(byteTicks(0, 140)).toEqual([0, 1]);
  });

  it('keeps a readable height whatever the legend takes, and grows with its box', () => {
    expect(chartHeight(110, 60)).toBe(MIN_CHART_PX);
    expect(chartHeight(600, 40)).toBe(556);
  });

  it('asks for a box no taller than the pane shows, so its top is never cut off; readable before that', () => {
    // Issue 30 #15: at 1440x900 the pane showed about 215 px and the box was 260 px or more.
    expect(chartBoxPx(215, 18)).toBe(215);
    expect(chartBoxPx(1000, 18)).toBe(PREFERRED_BOX_PX);
    expect(chartBoxPx(120, 18)).toBe(MIN_CHART_PX + 18 + 4);
    expect(chartHeight(chartBoxPx(215, 18), 18)).toBeLessThanOrEqual(215 - 18);
  });
});

describe('Explore byte axis', () => {
  const KiB = 1024;
  it('labels round binary sizes, not 976.6 KiB / 732.4 KiB (issue 30 #15)', () => {
    // A 1 MB (decimal) frame, the case that drew 976.6 KiB and 732.4 KiB ticks.
    const { top, ticks } = exploreByteAxis(1_000_000);
    expect(top).toBeGreaterThanOrEqual(1_000_000);
    const labels = ticks.map(formatByteTick);
    expect(labels).not.toContain('976.6 KiB');
    expect(labels).not.toContain('732.4 KiB');
    expect(labels).toEqual(expect.arrayContaining(['0 B', '256 KiB', '512 KiB', '768 KiB', '1 MiB']));
    // Every tick is a whole multiple of one power-of-two step.
    const step = ticks[1];
    expect(Math.log2(step) % 1).toBe(0);
    ticks.forEach((t, i) => expect(t).toBe(i * step));
    expect(ticks.at(-1)).toBe(top);
  });

  it('writes a tick as short as it is exact: 1 MiB, 1.5 MiB, 768 KiB, 4 KiB, 100 B', () => {
    expect(formatByteTick(MiB)).toBe('1 MiB');
    expect(formatByteTick(1.5 * MiB)).toBe('1.5 MiB');
    expect(formatByteTick(1.25 * MiB)).toBe('1.25 MiB');
    expect(formatByteTick(768 * KiB)).toBe('768 KiB');
    expect(formatByteTick(4 * KiB)).toBe('4 KiB');
    expect(formatByteTick(100)).toBe('100 B');
    expect(formatByteTick(2 * 1024 * MiB)).toBe('2 GiB');
  });

  it('keeps at least three ticks for a tiny maximum', () => {
    expect(exploreByteAxis(0).ticks.length).toBeGreaterThanOrEqual(2);
    expect(exploreByteAxis(3000).ticks.length).toBeGreaterThanOrEqual(3);
  });
});
