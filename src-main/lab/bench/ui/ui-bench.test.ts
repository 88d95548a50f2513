// The window benchmark's parts that run without a browser: the synthetic
// feed (real units replayed into a real tap) and the frame statistics, plus
// the page-side sampler run against a stand-in window. No timing is asserted:
// the feed runs on a hand-driven clock.
import { describe, expect, it } from 'vitest';
import { encodeLenPrefix } from '@shared/wire/len-frame';
import { Tap } from '../../../engine/tap';
import { harvestUnits, SyntheticFeed } from './synthetic-feed';
import { highestPassingRate, limitedBy } from './driver';
import {
  droppedFrames,
  frameStats,
  percentile,
  ratePasses,
  PAGE_SAMPLER,
  PAGE_TAKE_SAMPLES,
  type FrameSamples,
} from './frame-stats';

function tapWithUnits(): { tap: Tap; send: (round: number, rank: number) => void } {
  const tap = new Tap();
  const link = tap.link({ id: 'h0.r1.control', kind: 'loopback', host: 0, rank: 1 } as never);
  const send = (round: number, rank: number) => {
    const blob = new Uint8Array([round, rank, 1, 2, 3]);
    tap.unit({
      link,
      dir: 'up',
      layer: 'lenframe',
      kind: 'ControlFrame',
      rank,
      round,
      length: blob.length + 4,
      summary: `ControlFrame from rank ${rank} (${blob.length} B)`,
      bytes: [encodeLenPrefix(blob.length), blob],
    });
  };
  return { tap, send };
}

describe('synthetic feed', () => {
  it('harvests real units from a tap and replays them into it as new records', async () => {
    const { tap, send } = tapWithUnits();
    const harvest = harvestUnits(tap, 4);
    send(3, 1);
    send(3, 2);
    send(4, 1);
    send(4, 2);
    const templates = await harvest;
    expect(templates.map((t) => t.round)).toEqual([3, 3, 4, 4]);
    expect([...templates[0].bytes]).toEqual([5, 0, 0, 0, 3, 1, 1, 2, 3]);

    let now = 0;
    const feed = new SyntheticFeed(tap, templates, () => now);
    const seen: { seq: number; round?: number; rank?: number }[] = [];
    tap.onRecord((r) => seen.push({ seq: r.seq, round: r.round, rank: r.rank }));
    feed.start(1000, 1_000_000); // the timer never fires here; ticks are driven by hand
    now = 10; // 10 ms at 1000/s: 10 units
    expect(feed.tick()).toBe(10);
    feed.stop();
    expect(feed.counts.emitted).toBe(10);
    // New seqs after the four real units; rounds move on by the harvested span (2) per cycle.
    expect(seen.map((s) => s.seq)).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    expect(seen.map((s) => s.round)).toEqual([3, 3, 4, 4, 5, 5, 6, 6, 7, 7]);
    // Each replayed unit keeps its bytes, as a real unit's are kept.
    expect([...tap.bytesOf(13)!.bytes]).toEqual([...templates[1].bytes]);
    expect(tap.recordCount).toBe(14);
  });

  it('does not flood after a stall: at most a quarter second of schedule per tick, the rest counted as behind', async () => {
    const { tap, send } = tapWithUnits();
    const harvest = harvestUnits(tap, 1);
    send(0, 1);
    let now = 0;
    const feed = new SyntheticFeed(tap, await harvest, () => now);
    feed.start(2000, 1_000_000);
    now = 10_000;
    expect(feed.tick()).toBe(500);
    feed.stop();
    expect(feed.counts.behind).toBe(20_000 - 500);
  });

  it('refuses an empty template list and a rate that is not positive', async () => {
    const { tap, send } = tapWithUnits();
    expect(() => new SyntheticFeed(tap, [])).toThrow(/at least one unit template/);
    const harvest = harvestUnits(tap, 1);
    send(0, 1);
    const feed = new SyntheticFeed(tap, await harvest);
    expect(() => feed.start(0)).toThrow(/positive/);
  });
});

describe('frame statistics', () => {
  it('percentiles by nearest rank', () => {
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(xs, 50)).toBe(50);
    expect(percentile(xs, 95)).toBe(95);
    expect(Number.isNaN(percentile([], 50))).toBe(true);
  });

  it('counts the frames a long interval hid', () => {
    const v = 1000 / 60;
    expect(droppedFrames([v, v, v], v)).toBe(0);
    expect(droppedFrames([v, 2 * v, 4 * v + 1], v)).toBe(1 + 3);
  });

  it('passes a smooth page and fails a slow one', () => {
    const v = 1000 / 60;
    const samples: FrameSamples = { intervals: Array(100).fill(v), work: Array(100).fill(5) };
    const traced = (cpu: number) => ({
      busy: Array(100).fill(cpu),
      cpu: Array(100).fill(cpu),
    });
    expect(ratePasses(frameStats(samples, v, traced(5)), v)).toBe(true);
    expect(ratePasses(frameStats(samples, v, traced(20)), v)).toBe(false);
    const late: FrameSamples = { intervals: Array(100).fill(2 * v), work: Array(100).fill(5) };
    const st = frameStats(late, v, traced(5));
    expect(st.dropped).toBe(100);
    expect(ratePasses(st, v)).toBe(false);
  });

  it("the page's sampler records intervals and work per animation frame", async () => {
    const frames: ((ts: number) => void)[] = [];
    const g = globalThis as Record<string, unknown>;
    g.window = {};
    g.requestAnimationFrame = (cb: (ts: number) => void) => frames.push(cb);
    try {
      new Function(PAGE_SAMPLER)();
      // A whole number of ms: t0 + 16 i minus t0 + 16 (i - 1) is then exactly 16 (a fractional t0 gave 15.999999999999943).
      const t0 = Math.round(performance.now());
      for (let i = 0; i < 5; i++) {
        frames.shift()!(t0 + i * 16);
        await new Promise((r) => setTimeout(r, 5)); // the MessageChannel message lands after the frame
      }
      const got = new Function(`return ${PAGE_TAKE_SAMPLES}`)() as FrameSamples;
      expect(got.intervals).toEqual([16, 16, 16, 16]);
      expect(got.work.length).toBe(5);
      expect(got.work.every((w) => Number.isFinite(w))).toBe(true);
      const again = new Function(`return ${PAGE_TAKE_SAMPLES}`)() as FrameSamples;
      expect(again.intervals).toEqual([]);
    } finally {
      delete g.window;
      delete g.requestAnimationFrame;
    }
  });
});

describe('which side limits', () => {
  const r = (rate: number, pass: boolean, shown: number, produced: number) => ({
    rate,
    pass,
    following: true,
    shownPerSec: shown,
    producedPerSec: produced,
  });
  it('names the engine when it did not produce the rate asked, else the window', () => {
    expect(limitedBy([r(1000, true, 1000, 1000), r(2000, false, 1500, 1500)], 1000, 800)).toMatch(
      /^engine: at 2000\/s asked it produced 1500\/s; the engine alone delivers 800\/s/,
    );
    expect(limitedBy([r(1000, true, 1000, 1000), r(2000, false, 1990, 2000)], 1000, 5000)).toBe(
      'window: at 2000/s (frames or rows shown)',
    );
    expect(limitedBy([r(1000, true, 1000, 1000)], 1000, 5000)).toBe('neither up to 1000/s');
  });
});

describe('highest passing rate', () => {
  const r = (rate: number, pass: boolean, shown = rate) => ({
    rate,
    pass,
    following: true,
    shownPerSec: shown,
  });
  it('is the highest rate with every lower rate passing, not a pass above a failure', () => {
    expect(highestPassingRate([r(1000, true), r(2000, true), r(5000, false), r(50_000, true)])).toBe(2000);
    expect(highestPassingRate([r(1000, false), r(2000, true)])).toBeNull();
    // A rate whose rows the list did not show (under 0.9 x the rate) does not pass.
    expect(highestPassingRate([r(1000, true), r(2000, true, 1500)])).toBe(1000);
  });
});
