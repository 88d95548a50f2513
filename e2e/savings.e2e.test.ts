// Issue 30 #3 in the window, at 1024x700 and 1440x900: with 4 hosts of
// K = 2, 2, 1, 1 and rounds 50 ms apart, the savings panel read 0.33 for
// K = 2 and 0.65 for K = 1, forward 0.964, "one rank" 48.8 KiB for a
// 51.4 KiB frame, and direct never measured a round: its figures came from
// counter samples 100 ms apart. Each round's bytes are now counted unit by
// unit, so in fold, forward and direct, with a 10 KiB model and a 1 MiB bf16
// one, every host's row reads the wire format's exact figures (the sweep's
// theory): uplink 25 + F (forward K x, direct K x (4 + F)), one rank 4 + F.
// And the chart's top is inside its box (item 15).
import { describe, it, expect } from 'vitest';
import path from 'node:path';
import { useAppPerViewport, VIEWPORTS } from './app-per-viewport';
import type { UplinkMode, WireDtype } from '@shared/lab/topology';
import { dataUpBytes, LEN_PREFIX_BYTES, roundFrameBytes } from '@shared/sweep/theory';
import { sizeShort } from '../src-renderer/src/lib/savings-theory';
import { MIN_CHART_PX } from '../src-renderer/src/lib/byte-axis';
import { browserOrSkip, clickStart, resultsDir } from './support';

const exe = browserOrSkip('savings e2e');
const WAIT = { timeout: 120_000 };
const K = [2, 2, 1, 1];
const WORKLOADS: { mode: UplinkMode; modelBytes: number; dtype: WireDtype }[] = [
  { mode: 'fold', modelBytes: 10 * 1024, dtype: 'f32' },
  { mode: 'forward', modelBytes: 10 * 1024, dtype: 'f32' },
  { mode: 'direct', modelBytes: 10 * 1024, dtype: 'f32' },
  { mode: 'fold', modelBytes: 1024 * 1024, dtype: 'bf16' },
  { mode: 'forward', modelBytes: 1024 * 1024, dtype: 'bf16' },
  { mode: 'direct', modelBytes: 1024 * 1024, dtype: 'bf16' },
];

describe.skipIf(!exe)('byte savings by unit, at 1024x700 and 1440x900', { timeout: 600_000 }, () => {
  const { pages } = useAppPerViewport(exe);

  /** Starts the workload from the first page's form, 50 ms between rounds. */
  async function start(w: (typeof WORKLOADS)[number]): Promise<void> {
    const page = pages[0];
    const form = page.locator('details.new-topology');
    if ((await form.getAttribute('open')) === null)
      await page.getByText('New topology (used by Start)').click();
    await page.getByLabel('Or ranks host by host').fill(K.join(','));
    await page.getByLabel('Model (MiB)').fill(String(w.modelBytes / 1024 / 1024));
    // A label wrapping its select is named with the options' text too: find it by its first word.
    await form.locator('label', { hasText: /^Mode/ }).locator('select').selectOption(w.mode);
    await form
      .locator('label', { hasText: /^Dtype/ })
      .locator('select')
      .selectOption(w.dtype);
    await clickStart(page);
    const interval = page.getByLabel('Round interval');
    await expect.poll(() => interval.isEnabled(), WAIT).toBe(true);
    await interval.selectOption('50');
  }

  for (const w of WORKLOADS) {
    const label = `${w.mode}, ${w.modelBytes / 1024} KiB ${w.dtype}`;
    it(`${label}: every host reads the theory's bytes and ratio, at both sizes`, async () => {
      await start(w);
      const F = roundFrameBytes(w.modelBytes, w.dtype);
      for (const [i, page] of pages.entries()) {
        const savings = page.getByRole('region', { name: 'Byte savings' });
        // This workload's session, not the last one's, on this page.
        const head = page.getByRole('region', { name: 'Topology' }).locator('.panel-head');
        await expect.poll(() => head.textContent(), WAIT).toContain(`${w.mode} · elastic · ${sizeShort(w)}`);
        for (const [h, k] of K.entries()) {
          const row = savings.getByRole('row', { name: `savings h${h}` });
          // A fresh session: rows fill as its rounds are measured (a row of the last session is replaced).
          await expect
            .poll(async () => Number(await row.getAttribute('data-rounds')), WAIT)
            .toBeGreaterThanOrEqual(5);
          await expect.poll(() => row.getAttribute('data-k'), WAIT).toBe(String(k));
          const attr = async (name: string) => Number(await row.getAttribute(name));
          // The panel is read twice a second: right after the new session's header it may still show
          // the last session's rows (same K) for a moment; it must come to exactly these figures.
          await expect.poll(() => attr('data-uplink'), WAIT).toBe(dataUpBytes(w.mode, k, F));
          await expect.poll(() => attr('data-per-rank'), WAIT).toBe(LEN_PREFIX_BYTES + F);
          const theory = dataUpBytes(w.mode, k, F) / dataUpBytes('direct', k, F);
          expect(await attr('data-ratio')).toBeCloseTo(theory, 6);
          expect(await row.getAttribute('data-theory')).toBe(await row.getAttribute('data-ratio'));
          if (w.mode === 'fold') expect(await attr('data-ratio')).toBeGreaterThan(1 / k);
          if (w.mode === 'forward' || (w.mode === 'fold' && k === 1))
            expect(await attr('data-ratio')).toBeGreaterThan(1);
          if (w.mode === 'direct') expect(await attr('data-ratio')).toBe(1);
        }
        expect(await savings.getByLabel('Frame and headers').textContent()).toMatch(
          w.dtype === 'bf16' ? /1\.00 MiB model \(f32 elements\), sent as bf16/ : /sent as f32/,
        );
        // Item 15: the chart's box is no taller than its pane shows, so scrolled into view the whole
        // chart shows, top included (it was taller than the pane at 1440x900, its top always cut off).
        // On a pane too short for a readable plot (1024x700's) the plot keeps its readable floor.
        const chart = savings.locator('.chart');
        await chart.scrollIntoViewIfNeeded();
        const fit = await chart.evaluate((box, MIN) => {
          const body = box.parentElement!;
          const style = box.ownerDocument.defaultView!.getComputedStyle(body);
          const b = box.getBoundingClientRect();
          const p = body.getBoundingClientRect();
          const legend = box.querySelector('.u-legend')?.getBoundingClientRect().height ?? 0;
          return {
            visible: body.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom),
            box: b.height,
            inside: b.top >= p.top - 1 && b.bottom <= p.bottom + 1,
            floor: MIN + legend + 4,
          };
        }, MIN_CHART_PX);
        if (VIEWPORTS[i].width === 1440 || fit.visible >= fit.floor) {
          expect(fit.box).toBeLessThanOrEqual(fit.visible + 1);
          expect(fit.inside).toBe(true);
        } else expect(fit.box).toBeLessThanOrEqual(fit.floor + 1);
        const at = `${VIEWPORTS[i].width}x${VIEWPORTS[i].height}`;
        await page.screenshot({ path: path.join(resultsDir, `savings-${w.mode}-${w.modelBytes}-${at}.png`) });
        await savings.screenshot({
          path: path.join(resultsDir, `savings-chart-${w.mode}-${w.modelBytes}-${at}.png`),
        });
      }
    });
  }
});
