// `npm run bench:ui -- [--json] [--seconds S] [--soak S] [--rates 1000,2000,...]`:
// the window under a rising feed. Starts the bench's engine process
// (bench-server.ts: browser mode with a real 2 x 4 topology at a small model),
// opens the built window in Debian's Chromium (playwright-core, as the e2e
// tests do) at 1440 x 900 with every view open, the list following and a
// row in the inspector, then replays real units into the engine's tap at each
// rate and reads, per rate, the frames (frame-stats.ts), the records the list
// showed per second and the page's JS heap. Last, the engine alone at full
// speed (no feed, no pause between rounds), so the report says which side
// limits. Bundled to out/node/ui-bench.mjs by scripts/bench-ui.mjs.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Page, type CDPSession } from 'playwright-core';
import {
  FRAME_BUDGET_MS,
  frameStats,
  percentile,
  ratePasses,
  PAGE_NEWEST_SHOWN,
  PAGE_SAMPLER,
  PAGE_TAKE_SAMPLES,
} from './frame-stats';
import type { FrameSamples, FrameStats } from './frame-stats';
import { FRAME_TRACE_CATEGORIES, framesFromTrace, type TraceEvent } from './trace-frames';
import { saveProfile, saveTrace, summarizeProfile, type CpuProfile } from './profiles';
import { ServerProcess } from './server-process';

const BROWSERS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

export interface UiBenchOptions {
  serverScript: string;
  rendererDir: string;
  browser: string;
  rates: number[];
  seconds: number;
  soakSeconds: number;
  modelBytes: number;
  /** Write a CPU profile of the page per rate into this folder, and log its top self times. */
  profileDir?: string;
  /**
   * Keep each measuring window's trace in this folder (with the devtools timeline added: style,
   * layout, paint, script, which costs the page some time), and log where the main thread went.
   */
  traceDir?: string;
}

interface RateResult {
  rate: number;
  frames: FrameStats;
  pass: boolean;
  /** Records the list showed per second (newest row's seq advance). */
  shownPerSec: number;
  /** The list still followed the newest records at the end of the window. */
  following: boolean;
  /** Units the engine's tap produced per second (feed plus the real topology). */
  producedPerSec: number;
  /** Units the feed was behind its schedule at the end (the engine's loop could not keep up). */
  feedBehind: number;
  heapUsedBytes: number;
  engineRssBytes: number;
  loadAvg: number[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round1 = (x: number) => Math.round(x * 10) / 10;

async function heapUsed(cdp: CDPSession): Promise<number> {
  await cdp.send('HeapProfiler.collectGarbage');
  const h = await cdp.send('Runtime.getHeapUsage');
  return h.usedSize;
}

/**
 * Which side stops the window first: at the lowest failing rate, the engine
 * when it produced under 90% of the rate asked, else the window. The engine
 * alone (real topology) is named when the window keeps up with more than it delivers.
 */
export function limitedBy(
  rates: readonly {
    rate: number;
    pass: boolean;
    following: boolean;
    shownPerSec: number;
    producedPerSec: number;
  }[],
  top: number | null,
  engineAlone: number,
): string {
  const failing = rates.find((r) => !(r.pass && r.following && r.shownPerSec >= r.rate * 0.9));
  const tail =
    top !== null && engineAlone < top
      ? `; the engine alone delivers ${engineAlone}/s, below the window's ${top}/s`
      : '';
  if (!failing) return `neither up to ${top}/s${tail}`;
  if (failing.producedPerSec < failing.rate * 0.9)
    return `engine: at ${failing.rate}/s asked it produced ${failing.producedPerSec}/s${tail}`;
  return `window: at ${failing.rate}/s (frames or rows shown)${tail}`;
}

/**
 * The highest rate that passed with every lower rate passing too. At a rate
 * past what the socket drains the engine's side holds the window's batches
 * and sends them merged (frame-batcher.ts), so the page redraws less often and
 * its frames get lighter: 50k/s can pass where 20k/s failed, and is not the
 * window keeping up with 50k/s.
 */
export function highestPassingRate(
  rates: readonly { rate: number; pass: boolean; following: boolean; shownPerSec: number }[],
): number | null {
  let top: number | null = null;
  for (const r of [...rates].sort((a, b) => a.rate - b.rate)) {
    if (!(r.pass && r.following && r.shownPerSec >= r.rate * 0.9)) break;
    top = r.rate;
  }
  return top;
}

async function count(server: ServerProcess) {
  const c = await server.ask('count');
  return {
    t: c.t as number,
    tap: c.tapRecords as number,
    rss: c.rssBytes as number,
    behind: (c.feed as { behind: number } | null)?.behind ?? 0,
  };
}

/**
 * One measuring window: frames (the page's rAF samples and a trace of its main thread), records
 * shown and produced per second. `traceFile`: keep the trace there, with the devtools timeline.
 */
async function measure(
  page: Page,
  server: ServerProcess,
  seconds: number,
  vsyncMs: number,
  traceFile?: string,
  log: (s: string) => void = () => {},
) {
  const browser = page.context().browser()!;
  // Invalidation tracking is left out: it made the page's frames about five times slower.
  const categories = traceFile ? [...FRAME_TRACE_CATEGORIES, 'devtools.timeline'] : FRAME_TRACE_CATEGORIES;
  await browser.startTracing(page, { categories });
  await page.evaluate(PAGE_TAKE_SAMPLES);
  const seq0 = (await page.evaluate(PAGE_NEWEST_SHOWN)) as number;
  const c0 = await count(server);
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const samples = (await page.evaluate(PAGE_TAKE_SAMPLES)) as FrameSamples;
  const seq1 = (await page.evaluate(PAGE_NEWEST_SHOWN)) as number;
  const c1 = await count(server);
  const dt = (performance.now() - t0) / 1000;
  const buf = await browser.stopTracing();
  if (traceFile) saveTrace(buf, traceFile, log);
  const events = (JSON.parse(buf.toString()) as { traceEvents: TraceEvent[] }).traceEvents;
  const frames = frameStats(samples, vsyncMs, framesFromTrace(events));
  // The list must still follow the newest records (no "Jump to latest" offered) for its rows to count as shown.
  const following = !(await page
    .getByRole('button', { name: /Jump to latest/ })
    .isVisible()
    .catch(() => false));
  return {
    following,
    frames,
    shownPerSec: Math.round((seq1 - seq0) / dt),
    producedPerSec: Math.round((c1.tap - c0.tap) / ((c1.t - c0.t) / 1000)),
    behind: c1.behind,
    rss: c1.rss,
  };
}

export async function runUiBench(o: UiBenchOptions, log: (s: string) => void) {
  const nodeArgs = o.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${o.profileDir}`] : [];
  const child = spawn(process.execPath, [...nodeArgs, o.serverScript, o.rendererDir], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const server = new ServerProcess(child);
  const browser = await chromium.launch({
    executablePath: o.browser,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const url = await server.ready;
    const config = { ranksPerHost: [4, 4], modelBytes: o.modelBytes, rounds: 0, roundIntervalMs: 250 };
    await server.ask('start', { config });
    const harvest = await server.ask('harvest', { units: 400 });
    log(`harvested ${String(harvest.templates)} units: ${(harvest.kinds as string[]).join(', ')}`);

    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const cdp = await page.context().newCDPSession(page);
    if (o.profileDir) await cdp.send('Profiler.enable');
    await page.goto(url);
    await page.locator('.rec-scroll [data-seq]').first().waitFor({ timeout: 60_000 });
    // The inspector open on a row, then the list following the newest again.
    // (A DOM click: the rows move under a pointer click while units stream in.)
    await page.evaluate(`document.querySelector('.rec-scroll [data-seq]').click()`);
    await page.getByRole('button', { name: /Jump to latest/ }).click();
    await page.evaluate(PAGE_SAMPLER);
    await browser.startTracing(page, { categories: FRAME_TRACE_CATEGORIES });
    await page.evaluate(PAGE_TAKE_SAMPLES);
    await sleep(2000);
    const idleSamples = (await page.evaluate(PAGE_TAKE_SAMPLES)) as FrameSamples;
    const idleTrace = (JSON.parse((await browser.stopTracing()).toString()) as { traceEvents: TraceEvent[] })
      .traceEvents;
    const idle = frameStats(idleSamples, 1000 / 60, framesFromTrace(idleTrace));
    // The display's interval: the shortest intervals the idle page reaches (on a busy machine even
    // the idle page misses frames, so its median can read two vsyncs).
    const p10 = percentile(idleSamples.intervals, 10);
    // An idle page that cannot reach 50 frames a second is a starved machine, not a slow display:
    // judge against 60 Hz and say so in the result (idleStarved).
    const idleStarved = !(p10 > 0 && p10 <= 20);
    const vsyncMs = idleStarved ? 1000 / 60 : p10;
    log(
      `idle page: frame interval p10 ${p10.toFixed(1)} ms, p50 ${idle.intervalP50} ms (p10 taken as the display's vsync), ` +
        `main-thread work per frame p50/p95 ${idle.workP50}/${idle.workP95} ms (${idle.workClock}), task wall time ${idle.busyP50}/${idle.busyP95} ms, in-page probe ${idle.probeP50}/${idle.probeP95} ms`,
    );

    const results: RateResult[] = [];
    for (const rate of o.rates) {
      await server.ask('feed', { rate });
      await sleep(2000); // warm-up: queues fill, the list reaches its steady size
      if (o.profileDir) await cdp.send('Profiler.start');
      const traceFile = o.traceDir ? path.join(o.traceDir, `page-${rate}.trace.json`) : undefined;
      const m = await measure(page, server, o.seconds, vsyncMs, traceFile, log);
      if (o.profileDir) await saveProfile(cdp, path.join(o.profileDir, `page-${rate}.cpuprofile`), log);
      const r: RateResult = {
        rate,
        frames: m.frames,
        pass: ratePasses(m.frames, vsyncMs),
        shownPerSec: m.shownPerSec,
        following: m.following,
        producedPerSec: m.producedPerSec,
        feedBehind: m.behind,
        heapUsedBytes: await heapUsed(cdp),
        engineRssBytes: m.rss,
        loadAvg: os.loadavg().map(round1),
      };
      results.push(r);
      log(
        `${rate}/s: work p50/p95/p99 ${r.frames.workP50}/${r.frames.workP95}/${r.frames.workP99} ms (${r.frames.workClock}; task wall time ${r.frames.busyP50}/${r.frames.busyP95}, in-page probe ${r.frames.probeP50}/${r.frames.probeP95}), interval p95 ${r.frames.intervalP95} ms, ` +
          `dropped ${r.frames.dropped}/${r.frames.frames}, ${r.following ? 'following' : 'NOT following'}, shown ${r.shownPerSec}/s, produced ${r.producedPerSec}/s, ` +
          `heap ${(r.heapUsedBytes / 2 ** 20).toFixed(1)} MiB, load ${r.loadAvg.join(' ')} ${r.pass ? 'PASS' : 'fail'}`,
      );
    }
    const top = highestPassingRate(results);

    let soak: Record<string, unknown> | null = null;
    if (top !== null && o.soakSeconds > 0) {
      await server.ask('feed', { rate: top });
      const heapBefore = await heapUsed(cdp);
      const m = await measure(page, server, o.soakSeconds, vsyncMs);
      soak = {
        rate: top,
        seconds: o.soakSeconds,
        frames: m.frames,
        pass: ratePasses(m.frames, vsyncMs),
        shownPerSec: m.shownPerSec,
        heapBeforeBytes: heapBefore,
        heapAfterBytes: await heapUsed(cdp),
        loadAvg: os.loadavg().map(round1),
      };
      log(`soak ${top}/s for ${o.soakSeconds} s: ${JSON.stringify(soak)}`);
    }
    await server.ask('feed', { rate: 0 });

    // The engine alone: the real topology at full speed, no feed.
    await server.ask('start', { config: { ...config, roundIntervalMs: 0 } });
    await page.locator('.rec-scroll [data-seq]').first().waitFor({ timeout: 60_000 });
    await sleep(3000);
    const e = await measure(page, server, o.seconds, vsyncMs);
    const engine = {
      topology: '2 x 4',
      modelBytes: o.modelBytes,
      recordsPerSec: e.producedPerSec,
      shownPerSec: e.shownPerSec,
      frames: e.frames,
      loadAvg: os.loadavg().map(round1),
    };
    log(
      `engine alone at full speed: ${engine.recordsPerSec} records/s, window shows ${engine.shownPerSec}/s`,
    );

    return {
      machine: { cpus: os.cpus().length, loadAvg: os.loadavg().map(round1) },
      vsyncMs: round1(vsyncMs),
      idlePage: {
        intervalP10: round1(p10),
        intervalP50: idle.intervalP50,
        workP50: idle.workP50,
        workP95: idle.workP95,
        busyP50: idle.busyP50,
        busyP95: idle.busyP95,
        probeP50: idle.probeP50,
        probeP95: idle.probeP95,
        starved: idleStarved,
      },
      budget: {
        workP95Ms: FRAME_BUDGET_MS,
        work: "the page's renderer main thread: CPU time of its top-level tasks between the ends of two BeginMainFrames (Chromium trace)",
        intervalP95: '<= 1.1 vsync',
        shownAtLeast: '0.9 x rate',
      },
      rates: results,
      highestPassingRate: top,
      soak,
      engine,
      limitedBy: limitedBy(results, top, engine.recordsPerSec),
      /** The most units per second the engine's side (feed, tap, session, recording, web server) produced. */
      engineFeedCeiling: Math.max(0, ...results.map((r) => r.producedPerSec)),
    };
  } finally {
    await browser.close().catch(() => {});
    const exited = new Promise((r) => child.once('exit', r));
    child.stdin!.end();
    child.kill('SIGTERM');
    await exited;
    if (o.profileDir) {
      // The engine process's profile (node --cpu-prof writes it at exit): the whole run.
      const files = fs
        .readdirSync(o.profileDir)
        .filter((f) => f.endsWith('.cpuprofile') && f.startsWith('CPU.'));
      const newest = files.sort().at(-1);
      if (newest) {
        const file = path.join(o.profileDir, newest);
        summarizeProfile(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile, file, log);
      }
    }
  }
}

function parseArgs(argv: string[]): { json: boolean; opts: Partial<UiBenchOptions> } {
  const out: Partial<UiBenchOptions> = {};
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--json') json = true;
    else if (a === '--seconds') out.seconds = Number(argv[++i]);
    else if (a === '--soak') out.soakSeconds = Number(argv[++i]);
    else if (a === '--rates') out.rates = argv[++i].split(',').map(Number);
    else if (a === '--model-bytes') out.modelBytes = Number(argv[++i]);
    else if (a === '--profile') out.profileDir = path.resolve(argv[++i]);
    else if (a === '--trace') out.traceDir = path.resolve(argv[++i]);
    else if (a === '--renderer') out.rendererDir = path.resolve(argv[++i]);
    else
      throw new Error(
        `unknown option ${a} (known: --json, --seconds S, --soak S, --rates A,B,..., --model-bytes N, --profile DIR, --trace DIR, --renderer DIR)`,
      );
  }
  return { json, opts: out };
}

/** Entry: argv after the script, paths from the launcher (scripts/bench-ui.mjs). */
export async function main(
  argv: string[],
  paths: { serverScript: string; rendererDir: string },
): Promise<number> {
  const { json, opts } = parseArgs(argv);
  const browser = process.env.RELAY_LAB_BROWSER ?? BROWSERS.find((p) => fs.existsSync(p));
  if (!browser) {
    process.stderr.write('bench:ui: no Chromium found (set RELAY_LAB_BROWSER)\n');
    return 2;
  }
  const result = await runUiBench(
    {
      ...paths,
      ...(opts.rendererDir ? { rendererDir: opts.rendererDir } : {}),
      ...(opts.profileDir ? { profileDir: opts.profileDir } : {}),
      ...(opts.traceDir ? { traceDir: opts.traceDir } : {}),
      browser,
      rates: opts.rates ?? [1000, 2000, 5000, 10_000, 20_000, 50_000],
      seconds: opts.seconds ?? 8,
      soakSeconds: opts.soakSeconds ?? 60,
      modelBytes: opts.modelBytes ?? 4096,
    },
    (s) => process.stderr.write(`bench:ui: ${s}\n`),
  );
  if (json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  else
    process.stdout.write(
      `highest rate with main-thread work per frame p95 <= 16 ms and frames on time: ${result.highestPassingRate ?? 'none'}\n`,
    );
  return 0;
}
